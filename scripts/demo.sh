#!/usr/bin/env bash
# One command, fresh Debian 12, as root: install, build, install the plugins into a
# prefix, start a real loopback Slurm cluster (munged, slurmctld, slurmd) with
# JobSubmitPlugins=trainfit and the SPANK plugin, and show an accepted, a rejected
# and a resized submission, then the audit log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
demo=$(mktemp -d /tmp/trainfit-demo.XXXXXX)
cmake --install build --prefix "$demo/install" >/dev/null
plugins=$(dirname "$(find "$demo/install" -name job_submit_trainfit.so | head -1)")
source tests/slurm/cluster.sh
cat > "$demo/trainfit.conf" <<CONF
action = reject                    # the default partition refuses jobs that would OOM
gpus_per_node = 64
audit_log = $demo/audit.jsonl
partition.elastic.action = resize  # this one grows them to min_gpus_to_fit
CONF
trap 'cluster_stop "$demo"' EXIT
cluster_start "$demo" "$plugins" trainfit
cd "$demo"   # the jobs' slurm-N.out files go here, not into the checkout
echo "== cluster up: $(sinfo -h -o '%P %D %G' | tr '\n' ' ')"
show() { echo; echo "\$ $*"; "$@" 2>&1 || echo "(exit $?)"; }
show sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-seq=4096 --llm-zero=3 --wrap "sleep 5"
show sbatch --gpus=h100:8 --llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full --wrap "sleep 5"
show sbatch -p elastic --gpus=h100:8 --llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full --wrap "sleep 5"
job=$(squeue -h -p elastic -o %i | head -1)
echo; echo "\$ scontrol show job $job | grep TresPerJob"; scontrol show job "$job" | grep -o "TresPerJob=[^ ]*"
echo; echo "== audit log ($demo/audit.jsonl)"; cat "$demo/audit.jsonl"
