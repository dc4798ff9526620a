#!/usr/bin/env bash
# Submission throughput with and without JobSubmitPlugins=trainfit on a real loopback
# cluster (as root). Each round starts a fresh cluster and submits N held, annotated
# batch jobs through libslurm's API (bench/submit_jobs: no sbatch process per job, so
# the rate is slurmctld's), then reads slurmctld's own per-RPC time from sdiag.
# Rounds alternate without / with the plugin in ABBA order.
# Usage: bench/slurm_submit_bench.sh BUILD_DIR [N=1000] [ROUNDS=3]
# BASELINE=lua: the rounds without trainfit run a minimal job_submit.lua (a no-op plugin:
# Slurm still builds the script's job tables) instead of no job_submit plugin at all.
set -eu
build=$(cd "$1" && pwd)
n=${2:-1000}
rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"
comment="trainfit: model=llama3-8b seq=4096 zero=3"
baseline=${BASELINE:-}
[[ -z $baseline || $baseline == lua ]] || { echo "BASELINE=$baseline: accepted: lua, or unset" >&2; exit 2; }
baseline_label=$([[ $baseline == lua ]] && echo "minimal job_submit.lua" || echo "without job_submit plugin")
results=$(mktemp)

round() {  # round LABEL JOB_SUBMIT_PLUGINS
  local label=$1 plugins=$2 dir
  dir=$(mktemp -d /tmp/trainfit-bench.XXXXXX)
  printf 'action = reject\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$dir" > "$dir/trainfit.conf"
  : > "$dir/plugstack.conf"
  printf 'function slurm_job_submit(job_desc, part_list, submit_uid)\n  return slurm.SUCCESS\nend\n\nfunction slurm_job_modify(job_desc, job_rec, part_list, modify_uid)\n  return slurm.SUCCESS\nend\n\nreturn slurm.SUCCESS\n' > "$dir/job_submit.lua"
  cluster_start "$dir" "$build/plugin" "$plugins" >/dev/null
  "$build/bench/submit_jobs" 50 "$comment" "gres:gpu:h100:8" >/dev/null  # warm up
  sdiag --reset >/dev/null
  read -r jobs seconds failures < <("$build/bench/submit_jobs" "$n" "$comment" "gres:gpu:h100:8")
  local rpc audited=0
  rpc=$(sdiag | grep -E "REQUEST_SUBMIT_BATCH_JOB" | head -1 | sed 's/.*count:\([0-9]*\).*ave_time:\([0-9]*\).*/\1 \2/')
  [[ -f $dir/audit.jsonl ]] && audited=$(wc -l < "$dir/audit.jsonl")
  cluster_stop "$dir"
  rm -rf "$dir"
  echo "$label $jobs $seconds $failures $rpc $audited" >> "$results"
}

# ABBA order: the machine drifts (rates fall run after run here, whichever the
# configuration), and alternating the order cancels a linear drift.
for r in $(seq "$rounds"); do
  if (( r % 2 )); then round without "$baseline"; round trainfit trainfit
  else round trainfit trainfit; round without "$baseline"; fi
done

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
