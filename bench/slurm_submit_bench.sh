#!/usr/bin/env bash
# Submission throughput with and without JobSubmitPlugins=trainfit on a real loopback
# cluster (as root). Each round starts a fresh cluster and submits N held, annotated
# batch jobs through libslurm's API (bench/submit_jobs: no sbatch process per job, so
# the rate is slurmctld's), then reads slurmctld's own per-RPC time from sdiag.
# Rounds alternate without / with the plugin in ABBA order.
# Usage: bench/slurm_submit_bench.sh BUILD_DIR [N=1000] [ROUNDS=3]
set -eu
build=$(cd "$1" && pwd)
n=${2:-1000}
rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"
comment="trainfit: model=llama3-8b seq=4096 zero=3"
results=$(mktemp)

round() {  # round LABEL JOB_SUBMIT_PLUGINS
  local label=$1 plugins=$2 dir
  dir=$(mktemp -d /tmp/trainfit-bench.XXXXXX)
  printf 'action = reject\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$dir" > "$dir/trainfit.conf"
  : > "$dir/plugstack.conf"
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
  if (( r % 2 )); then round without ""; round trainfit trainfit
  else round trainfit trainfit; round without ""; fi
done

echo "| slurmctld | round | jobs | seconds | jobs/s | failed | submit RPCs (sdiag) | mean RPC µs (sdiag) | audit lines |"
echo "|---|---|---|---|---|---|---|---|---|"
awk '{ k[$1]++; printf "| %s | %d | %d | %.2f | %.0f | %d | %d | %d | %d |\n",
       ($1 == "without" ? "without job_submit plugin" : "JobSubmitPlugins=trainfit"), k[$1], $2, $3, $2 / $3, $4, $5, $6, $7 }' "$results"
echo
awk '{ rate[$1] += $2 / $3; rpc[$1] += $6; count[$1]++ }
     END { w = rate["without"] / count["without"]; t = rate["trainfit"] / count["trainfit"];
           printf "Mean: %.0f jobs/s without, %.0f with the plugin (%+.1f%%); mean submit RPC %.0f µs without, %.0f µs with (%+.0f µs).\n",
                  w, t, 100 * (t - w) / w, rpc["without"] / count["without"], rpc["trainfit"] / count["trainfit"],
                  rpc["trainfit"] / count["trainfit"] - rpc["without"] / count["without"] }' "$results"
rm -f "$results"
