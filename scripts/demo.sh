#!/usr/bin/env bash
# One command, fresh Debian 12, as root: install, build what the demo runs (the CLI and the
# plugins, in build-demo/: no tests, no benchmarks), install them into a temporary prefix,
# start a real loopback Slurm cluster (munged, slurmctld, slurmd) with
# JobSubmitPlugins=trainfit and the SPANK plugin, show an accepted submission with
# --llm-check (slurmctld's verdict), a rejected and a resized one, then `trainfit report` on
# the audit log. Everything it started and wrote is stopped and removed at exit.
# TRAINFIT_DEMO_BUILD=DIR: use that build tree as it is (tests/demo_test.sh), no install or build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TRAINFIT_DEMO_BUILD:-}
if [[ -z $build ]]; then
  bash scripts/install-deps.sh
  build=build-demo
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTRAINFIT_BUILD_TESTS=OFF -DTRAINFIT_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" --parallel "$(nproc)"
fi
demo=$(mktemp -d /tmp/trainfit-demo.XXXXXX)
echo "== working in $demo (removed at exit)"
# DESTDIR, not --prefix: absolute destinations (/etc/logrotate.d) land under it too.
DESTDIR="$demo/install" cmake --install "$build" >/dev/null
plugins=$(dirname "$(find "$demo/install" -name job_submit_trainfit.so | head -1)")
trainfit=$(find "$demo/install" -path '*/bin/trainfit' | head -1)
source tests/slurm/cluster.sh
cat > "$demo/trainfit.conf" <<CONF
action = reject                    # the default partition refuses jobs that would OOM
gpus_per_node = 64                 # the demo's one node has 64 GPUs
audit_log = $demo/audit.jsonl
partition.elastic.action = resize  # this one grows them to min_gpus_to_fit
CONF
munged_before=$(pgrep -x munged || true)
cleanup() {
  cluster_stop "$demo"
  [[ -n $munged_before ]] || pkill -x munged || true   # munged only if the demo started it
  rm -rf "$demo"
}
trap cleanup EXIT
cluster_start "$demo" "$plugins" trainfit
cd "$demo"   # the jobs' slurm-N.out files go here, not into the checkout
echo "== cluster up: $(sinfo -h -o '%P %D %G' | tr '\n' ' ')"
show() { echo; echo "\$ $*"; "$@" 2>&1 || echo "(exit $?)"; }
show sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-seq=4096 --llm-zero=3 --llm-check --wrap "sleep 5"
show sbatch --gpus=h100:8 --llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full --wrap "sleep 5"
show sbatch -p elastic --gpus=h100:8 --llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full --wrap "sleep 5"
job=$(squeue -h -p elastic -o %i | head -1)
echo; echo "\$ scontrol show job $job | grep TresPerJob"; scontrol show job "$job" | grep -o "TresPerJob=[^ ]*"
show "$trainfit" report --audit "$demo/audit.jsonl"
