#!/usr/bin/env bash
# Per-call cost of job_submit/trainfit against a minimal job_submit.lua, inside a real
# slurmctld (as root), on the same submissions: each round starts a fresh loopback cluster
# with both plugins between stopwatch entries (bench/job_submit_stopwatch.cpp),
#   JobSubmitPlugins=stopwatch,lua,stopwatch,trainfit,stopwatch   (or trainfit first)
# submits N held jobs through libslurm's API and reads each submission's laps, so every
# submission times both plugins back to back: the ratio is taken per submission, and the
# machine's drift (this VM's speed moves by 2x between minutes) cancels.
# The script is what a site's smallest job_submit.lua is (returns slurm.SUCCESS; Slurm
# still builds its job_desc and partition tables). Workloads: an annotated job that fits
# (accepted), one that does not fit under action = warn (the over-capacity decision's work:
# a refusal would end the plugin list before the later entries), an unannotated job.
# Usage: bench/job_submit_cost_bench.sh BUILD_DIR [N=2000] [ROUNDS=2]
# WORKLOADS="accepted" runs only the workloads named.
set -eu
build=$(cd "$1" && pwd)
n=${2:-2000}
rounds=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"
results=$(mktemp)
trap 'rm -f "$results"' EXIT

fits="trainfit: model=llama3-8b seq=4096 zero=3"
too_big="trainfit: model=llama3-70b seq=8192"

round() {  # round WORKLOAD ORDER ACTION COMMENT TRES   (ORDER: "lua,trainfit" or "trainfit,lua")
  local workload=$1 order=$2 action=$3 comment=$4 tres=$5 dir
  dir=$(mktemp -d /tmp/trainfit-bench.XXXXXX)
  printf 'action = %s\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$action" "$dir" > "$dir/trainfit.conf"
  printf 'function slurm_job_submit(job_desc, part_list, submit_uid)\n  return slurm.SUCCESS\nend\n\nfunction slurm_job_modify(job_desc, job_rec, part_list, modify_uid)\n  return slurm.SUCCESS\nend\n\nreturn slurm.SUCCESS\n' > "$dir/job_submit.lua"
  : > "$dir/plugstack.conf"
  TRAINFIT_STOPWATCH_OUT=$dir/laps TRAINFIT_STOPWATCH_ENTRIES=3 \
    cluster_start "$dir" "$build/plugin:$build/bench" "stopwatch,${order%,*},stopwatch,${order#*,},stopwatch" >/dev/null
  "$build/bench/submit_jobs" "$n" "$comment" "$tres" >/dev/null || echo "$workload: some submissions failed" >&2
  cluster_stop "$dir"
  grep -q desync "$dir/laps" && echo "$workload $order: the stopwatch lost count" >&2
  # Pair each submission's two laps: "workload lua_ns trainfit_ns".
  awk -v w="$workload" -v first="${order%,*}" '$1 == 1 { a = $2 } $1 == 2 {
      if (first == "lua") print w, a, $2; else print w, $2, a }' "$dir/laps" >> "$results"
  rm -rf "$dir"
}

workloads=(
  "accepted|reject|$fits|gres:gpu:h100:8"
  "warned|warn|$too_big|gres:gpu:h100:1"
  "unannotated|reject||gres:gpu:h100:8"
)
for r in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    IFS='|' read -r workload action comment tres <<< "$w"
    [[ " ${WORKLOADS:-accepted warned unannotated} " == *" $workload "* ]] || continue
    if (( r % 2 )); then orders=("lua,trainfit" "trainfit,lua"); else orders=("trainfit,lua" "lua,trainfit"); fi
    for order in "${orders[@]}"; do round "$workload" "$order" "$action" "$comment" "$tres"; done
  done
done

echo "| workload | submissions | lua median µs | trainfit median µs | trainfit p90 µs | median of per-submission ratios | p90 of ratios |"
echo "|---|---|---|---|---|---|---|"
for w in ${WORKLOADS:-accepted warned unannotated}; do
  awk -v w="$w" '$1 == w { print $2, $3, $3 / $2 }' "$results" > "$results.$w"
  count=$(wc -l < "$results.$w")
  # quantile COLUMN Q [DIVISOR]
  quantile() { sort -g -k"$1","$1" "$results.$w" | awk -v k="$1" -v q="$2" -v d="${3:-1}" -v n="$count" \
                 'NR == int(n * q) + 1 { printf "%.2f", $k / d }'; }
  echo "| $w | $count | $(quantile 1 0.5 1000) | $(quantile 2 0.5 1000) | $(quantile 2 0.9 1000) | $(quantile 3 0.5) | $(quantile 3 0.9) |"
  rm -f "$results.$w"
done
