#!/usr/bin/env bash
# Submission throughput with and without JobSubmitPlugins=trainfit on a real loopback
# cluster (as root): N held sbatch submissions each way, annotated through --comment
# (so the client side is identical), with slurmctld's own per-RPC time from sdiag.
# Usage: bench/slurm_submit_bench.sh BUILD_DIR [N=1000]
set -eu
build=$(cd "$1" && pwd)
n=${2:-1000}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"

run() {  # run LABEL JOB_SUBMIT_PLUGINS -> prints a table row
  local label=$1 plugins=$2 dir
  dir=$(mktemp -d /tmp/trainfit-bench.XXXXXX)
  printf 'action = reject\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$dir" > "$dir/trainfit.conf"
  : > "$dir/plugstack.conf"
  cluster_start "$dir" "$build/plugin" "$plugins" >/dev/null
  # Warm up, then measure.
  for _ in $(seq 20); do sbatch -H -Q --gpus=h100:8 --comment="trainfit: model=llama3-8b seq=4096 zero=3" --wrap true; done
  sdiag --reset >/dev/null
  local start end
  start=$(date +%s.%N)
  for _ in $(seq "$n"); do
    sbatch -H -Q --gpus=h100:8 --comment="trainfit: model=llama3-8b seq=4096 zero=3" --wrap true
  done
  end=$(date +%s.%N)
  local rpc
  rpc=$(sdiag | grep -E "REQUEST_SUBMIT_BATCH_JOB" | head -1 | sed 's/.*count:\([0-9]*\).*ave_time:\([0-9]*\).*/\1 \2/')
  local audited=0
  [[ -f $dir/audit.jsonl ]] && audited=$(wc -l < "$dir/audit.jsonl")
  cluster_stop "$dir"
  rm -rf "$dir"
  awk -v label="$label" -v n="$n" -v s="$start" -v e="$end" -v rpc="$rpc" -v audited="$audited" 'BEGIN {
    split(rpc, r, " ");
    printf "| %s | %d | %.2f | %.1f | %s | %s | %d |\n", label, n, e - s, n / (e - s), r[1], r[2], audited }'
}

echo "| slurmctld | jobs | seconds | jobs/s | submit RPCs (sdiag) | mean RPC time, µs (sdiag) | audit lines |"
echo "|---|---|---|---|---|---|---|"
run "without job_submit plugin" ""
run "JobSubmitPlugins=trainfit" "trainfit"
run "without job_submit plugin (again)" ""
run "JobSubmitPlugins=trainfit (again)" "trainfit"
