#!/usr/bin/env bash
# Submission throughput with and without JobSubmitPlugins=trainfit on real loopback
# clusters (as root). Each round starts two clusters side by side, one without trainfit
# and one with it, and submits N held, annotated batch jobs to each through libslurm's
# API (bench/submit_jobs: no sbatch process per job, so the rate is slurmctld's), in
# alternating chunks of N/CHUNKS jobs (ABBA order), then reads each slurmctld's own
# per-RPC time from sdiag. Interleaving matters: this VM's speed drifts by 2x within a
# minute, and clusters run one after the other measured the drift more than the plugin.
# Usage: bench/slurm_submit_bench.sh BUILD_DIR [N=1000] [ROUNDS=3]
# BASELINE=lua: the cluster without trainfit runs a minimal job_submit.lua (a no-op plugin:
# Slurm still builds the script's job tables) instead of no job_submit plugin at all.
# CHUNKS (default 20): how many chunks each side's N jobs are submitted in.
# BENCH_TMP (default /dev/shm, a tmpfs): where the clusters' state lives. On this VM's ext4
# a submit RPC is mostly the kernel allocating inodes for the job's script files, slower
# near the thousands deleted by the previous round, and that noise buried the plugin.
set -eu
build=$(cd "$1" && pwd)
n=${2:-1000}
rounds=${3:-3}
chunks=${CHUNKS:-20}
bench_tmp=${BENCH_TMP:-/dev/shm}
[[ -d $bench_tmp && -w $bench_tmp ]] || { [[ -z ${BENCH_TMP:-} ]] && bench_tmp=/tmp; }  # a root without /dev/shm
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"
comment="trainfit: model=llama3-8b seq=4096 zero=3"
tres="gres:gpu:h100:8"
baseline=${BASELINE:-}
[[ -z $baseline || $baseline == lua ]] || { echo "BASELINE=$baseline: accepted: lua, or unset" >&2; exit 2; }
(( n >= chunks && chunks > 0 )) || { echo "N=$n: at least CHUNKS=$chunks jobs" >&2; exit 2; }
baseline_label=$([[ $baseline == lua ]] && echo "minimal job_submit.lua" || echo "without job_submit plugin")
results=$(mktemp)
declare -A dirs seconds failures

start() {  # start SIDE PORT_BASE JOB_SUBMIT_PLUGINS
  local side=$1 dir
  dir=$(mktemp -d "$bench_tmp/trainfit-bench.XXXXXX")
  printf 'action = reject\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$dir" > "$dir/trainfit.conf"
  : > "$dir/plugstack.conf"
  printf 'function slurm_job_submit(job_desc, part_list, submit_uid)\n  return slurm.SUCCESS\nend\n\nfunction slurm_job_modify(job_desc, job_rec, part_list, modify_uid)\n  return slurm.SUCCESS\nend\n\nreturn slurm.SUCCESS\n' > "$dir/job_submit.lua"
  TRAINFIT_CLUSTER_PORT_BASE=$2 cluster_start "$dir" "$build/plugin" "$3" >/dev/null
  dirs[$side]=$dir seconds[$side]=0 failures[$side]=0
}

submit() {  # submit SIDE JOBS: adds the chunk's seconds and failures to the side's totals
  local jobs s f
  read -r jobs s f < <(SLURM_CONF=${dirs[$1]}/slurm.conf "$build/bench/submit_jobs" "$2" "$comment" "$tres" || true)
  seconds[$1]=$(awk -v a="${seconds[$1]}" -v b="$s" 'BEGIN { print a + b }')
  failures[$1]=$(( ${failures[$1]} + f ))
}

round() {  # round NUMBER: the side started first alternates
  if (( $1 % 2 )); then start without 20000 "$baseline"; start trainfit 30000 trainfit
  else start trainfit 30000 trainfit; start without 20000 "$baseline"; fi
  local side
  for side in without trainfit; do
    submit "$side" 50  # warm up
    SLURM_CONF=${dirs[$side]}/slurm.conf sdiag --reset >/dev/null
    seconds[$side]=0 failures[$side]=0
  done
  local chunk=$(( n / chunks )) c
  for c in $(seq "$chunks"); do
    if (( c % 2 )); then submit without "$chunk"; submit trainfit "$chunk"
    else submit trainfit "$chunk"; submit without "$chunk"; fi
  done
  for side in without trainfit; do
    local dir=${dirs[$side]} rpc audited=0
    rpc=$(SLURM_CONF=$dir/slurm.conf sdiag | grep -E "REQUEST_SUBMIT_BATCH_JOB" | head -1 | sed 's/.*count:\([0-9]*\).*ave_time:\([0-9]*\).*/\1 \2/')
    [[ -f $dir/audit.jsonl ]] && audited=$(wc -l < "$dir/audit.jsonl")
    echo "$side $(( chunk * chunks )) ${seconds[$side]} ${failures[$side]} $rpc $audited" >> "$results"
  done
  for side in without trainfit; do cluster_stop "${dirs[$side]}"; rm -rf "${dirs[$side]}"; done
}

for r in $(seq "$rounds"); do round "$r"; done

echo "| slurmctld | round | jobs | seconds | jobs/s | failed | submit RPCs (sdiag) | mean RPC µs (sdiag) | audit lines |"
echo "|---|---|---|---|---|---|---|---|---|"
awk -v base="$baseline_label" '{ k[$1]++; printf "| %s | %d | %d | %.2f | %.0f | %d | %d | %d | %d |\n",
       ($1 == "without" ? base : "JobSubmitPlugins=trainfit"), k[$1], $2, $3, $2 / $3, $4, $5, $6, $7 }' "$results"
echo
awk -v base="$baseline_label" '{ rate[$1] += $2 / $3; rpc[$1] += $6; count[$1]++ }
     END { w = rate["without"] / count["without"]; t = rate["trainfit"] / count["trainfit"];
           a = rpc["without"] / count["without"]; b = rpc["trainfit"] / count["trainfit"];
           printf "Mean (%s against trainfit): %.0f jobs/s without, %.0f with the plugin (%+.1f%%); mean submit RPC %.0f µs without, %.0f µs with (%+.0f µs, %+.1f%%).\n",
                  base, w, t, 100 * (t - w) / w, a, b, b - a, 100 * (b - a) / a }' "$results"
rm -f "$results"
