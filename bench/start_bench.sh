#!/usr/bin/env bash
# Start cost of what every user meets: `trainfit --version` and a process that loads the SPANK
# plugin (as every sbatch, salloc and srun does, endpoint= or not), each against a bare process
# (hyperfine, 300 runs after 30 warm-ups). Usage: bench/start_bench.sh BUILD_DIR [--srun]
# With --srun the same runs go through `srun -n1` on the cluster SLURM_CONF names.
set -euo pipefail
build=$(cd "$1" && pwd)
wrap=()
[[ ${2:-} == --srun ]] && wrap=(srun -n1 --quiet)
probe=$build/bench/load_probe
table=$(mktemp)
trap 'rm -f "$table"' EXIT
hyperfine -N --warmup 30 --runs 300 --style basic --export-markdown "$table" \
  "${wrap[*]:+${wrap[*]} }$probe" \
  "${wrap[*]:+${wrap[*]} }$probe $build/plugin/spank_trainfit.so" \
  "${wrap[*]:+${wrap[*]} }/bin/true" \
  "${wrap[*]:+${wrap[*]} }$build/cli/trainfit --version" >/dev/null
cat "$table"
