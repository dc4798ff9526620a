#!/usr/bin/env bash
# One command, fresh Debian 12: install, build, and run the main job:
# an example estimate (Llama-3-70B on 8 x H100), the fewest GPUs it needs, and a fitting layout.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
tf=build/cli/trainfit
set -x
"$tf" estimate --model llama3-70b --gpus 8 --gpu h100 --seq 8192 --zero 3 || true
"$tf" min-gpus --model llama3-70b --gpu h100 --seq 8192 --zero 3 --gpus-per-node 8
"$tf" estimate --model llama3-70b --gpus 8 --gpu h100 --seq 8192 --zero 3 --recompute full --offload-optimizer
