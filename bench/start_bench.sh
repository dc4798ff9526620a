#!/usr/bin/env bash
# Start cost of what every user meets: `trainfit --version` and a process that loads the SPANK
# plugin (as every sbatch, salloc and srun does, endpoint= or not), each against a bare process
# (hyperfine, 300 runs after 30 warm-ups). Usage: bench/start_bench.sh BUILD_DIR [--srun]
# With --srun (as root) it starts a loopback cluster (tests/slurm/cluster.sh) and times whole
# steps: `srun -n1 /bin/true` with plugstack.conf empty and with the trainfit plugin in it
# (srun and slurmstepd both load it; the file is swapped before each run), and
# `srun -n1 trainfit --version` beside `srun -n1 /bin/true` (300 runs after 20 warm-ups).
# The plugin and the CLI are timed as the packages ship them: copies without debug sections
# (dh_strip, rpm's find-debuginfo); a RelWithDebInfo build's plugin is 37 MB, and mapping it
# costs srun and slurmstepd ~3 ms each.
set -euo pipefail
build=$(cd "$1" && pwd)
table=$(mktemp)
shipped=$(mktemp -d)
trap 'rm -rf "$table" "$shipped"' EXIT
strip --strip-debug -o "$shipped/spank_trainfit.so" "$build/plugin/spank_trainfit.so"
strip --strip-debug -o "$shipped/trainfit" "$build/cli/trainfit"

if [[ ${2:-} != --srun ]]; then
  probe=$build/bench/load_probe
  hyperfine -N --warmup 30 --runs 300 --style basic --export-markdown "$table" \
    "$probe" "$probe $shipped/spank_trainfit.so" /bin/true "$shipped/trainfit --version" >/dev/null
  cat "$table"
  exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"
dir=$(mktemp -d /tmp/trainfit-start.XXXXXX)
trap 'cluster_stop "$dir"; rm -rf "$dir" "$table" "$shipped"' EXIT
printf 'action = reject\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$dir" > "$dir/trainfit.conf"
: > "$dir/plugstack.without"
echo "required $shipped/spank_trainfit.so default_gpu=h100 conf=$dir/trainfit.conf" > "$dir/plugstack.with"
cp "$dir/plugstack.with" "$dir/plugstack.conf"
cluster_start "$dir" "$build/plugin" "" >/dev/null
# The three alternate step by step (hyperfine runs one command's runs in a block, and this
# VM's speed drifts between blocks by more than the difference measured). `date` is in
# every time alike.
step() {  # step PLUGSTACK PROGRAM...
  cp "$dir/plugstack.$1" "$dir/plugstack.conf"
  shift
  local start
  start=$(date +%s%N)
  srun -n1 --quiet "$@" >/dev/null
  echo $(( $(date +%s%N) - start ))
}
for i in $(seq 20); do step with /bin/true >/dev/null; done  # warm-up
for i in $(seq 300); do
  echo "without $(step without /bin/true)" >> "$table"
  echo "with $(step with /bin/true)" >> "$table"
  echo "cli $(step with "$shipped/trainfit" --version)" >> "$table"
done
echo "| srun step (300 each, interleaved) | median ms | mean ms | p90 ms |"
echo "|---|---|---|---|"
for variant in without with cli; do
  case $variant in
    without) label="srun -n1 /bin/true, plugstack.conf empty" ;;
    with) label="srun -n1 /bin/true, the trainfit plugin in plugstack.conf" ;;
    cli) label="srun -n1 trainfit --version, the trainfit plugin in plugstack.conf" ;;
  esac
  awk -v v="$variant" '$1 == v { print $2 / 1e6 }' "$table" | sort -g |
    awk -v label="$label" '{ x[NR] = $1; s += $1 } END { printf "| %s | %.2f | %.2f | %.2f |\n",
      label, x[int(NR / 2) + 1], s / NR, x[int(NR * 0.9) + 1] }'
done
