#!/usr/bin/env bash
# Start cost of what every user meets: `trainfit --version` and a process that loads the SPANK
# plugin (as every sbatch, salloc and srun does, endpoint= or not), each against a bare process
# (hyperfine, 300 runs after 30 warm-ups). Usage: bench/start_bench.sh BUILD_DIR [--srun]
# With --srun (as root) it starts a loopback cluster (tests/slurm/cluster.sh) and times whole
# steps: `srun -n1 /bin/true` with plugstack.conf empty and with the trainfit plugin in it
# (srun and slurmstepd both load it; the file is swapped before each run), and
# `srun -n1 trainfit --version` beside `srun -n1 /bin/true` (100 runs after 10 warm-ups).
set -euo pipefail
build=$(cd "$1" && pwd)
table=$(mktemp)
trap 'rm -f "$table"' EXIT

if [[ ${2:-} != --srun ]]; then
  probe=$build/bench/load_probe
  hyperfine -N --warmup 30 --runs 300 --style basic --export-markdown "$table" \
    "$probe" "$probe $build/plugin/spank_trainfit.so" /bin/true "$build/cli/trainfit --version" >/dev/null
  cat "$table"
  exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/slurm/cluster.sh"
dir=$(mktemp -d /tmp/trainfit-start.XXXXXX)
trap 'cluster_stop "$dir"; rm -rf "$dir" "$table"' EXIT
printf 'action = reject\ngpus_per_node = 64\naudit_log = %s/audit.jsonl\n' "$dir" > "$dir/trainfit.conf"
: > "$dir/plugstack.without"
echo "required $build/plugin/spank_trainfit.so default_gpu=h100 conf=$dir/trainfit.conf" > "$dir/plugstack.with"
cp "$dir/plugstack.with" "$dir/plugstack.conf"
cluster_start "$dir" "$build/plugin" "" >/dev/null
hyperfine -N --warmup 10 --runs 100 --style basic --export-markdown "$table" \
  --prepare "cp $dir/plugstack.{plugstack} $dir/plugstack.conf" -L plugstack without,with \
  "srun -n1 --quiet /bin/true # plugstack {plugstack}" >/dev/null
cat "$table"
echo
hyperfine -N --warmup 10 --runs 100 --style basic --export-markdown "$table" \
  --prepare "cp $dir/plugstack.with $dir/plugstack.conf" \
  "srun -n1 --quiet /bin/true" "srun -n1 --quiet $build/cli/trainfit --version" >/dev/null
cat "$table"
