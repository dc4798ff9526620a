#!/usr/bin/env bash
# Black-box tests of the trainfit binary: help, version, exit codes, formats, errors.
set -u
bin=$1
fixtures=$2
failures=0
pass=0

check() {  # check NAME EXPECTED_RC PATTERN -- command...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL $name: exit $rc, wanted $want"; echo "$out" | head -5; failures=$((failures + 1)); return
  fi
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: output lacks /$pattern/"; echo "$out" | head -5; failures=$((failures + 1)); return
  fi
  pass=$((pass + 1))
}

version=$(sed -n 's/^project(trainfit VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../CMakeLists.txt")
check help 0 "estimate" -- "$bin" --help
check version 0 "^trainfit $version\$" -- "$bin" --version
check estimate-help 0 "--micro-batch" -- "$bin" estimate --help
check fits 0 "^FITS: llama3-8b" -- "$bin" estimate --model llama3-8b --gpus 8 --gpu h100 --zero 3 --recompute full
check internal-error 70 "^trainfit: internal error: TRAINFIT_FAIL_INTERNAL" -- env TRAINFIT_FAIL_INTERNAL=1 "$bin" estimate --model llama3-8b
check oom 1 "^OOM: llama3-70b at seq 8192 needs .* min_gpus_to_fit=" -- \
  "$bin" estimate --model llama3-70b --gpus 8 --gpu h100 --seq 8192 --zero 3
check json 0 '"per_gpu_total_gb"' -- "$bin" estimate --model llama3-8b --gpus 8 --zero 3 --recompute full --format json
check csv 0 "^total,per_gpu_total," -- "$bin" estimate --model llama3-8b --gpus 8 --zero 3 --recompute full --format csv
check stdin 0 "FITS" -- bash -c "echo '{\"model\":\"gpt2\",\"seq_length\":1024}' | '$bin' estimate --request -"
check seed-request 0 "per_gpu_total_gb" -- bash -c "echo '{\"model_params_b\":8,\"num_gpus\":8,\"gpu_memory_gb\":80,\"micro_batch\":4,\"seq_length\":4096,\"num_layers\":32,\"hidden_dim\":4096,\"precision_bits\":16,\"zero_stage\":3,\"grad_ckpt\":1}' | '$bin' estimate --request - --format json"
# An HF config is named by its file (llama-3-8b.config.json), the verdict by the same name.
check hf-config 0 "^llama-3-8b on 8 x " -- "$bin" estimate --hf-config "$fixtures/hf/llama-3-8b.config.json" --gpus 8 --zero 3
check hf-config-verdict 0 "^(FITS|OOM): llama-3-8b at seq 4096 needs " -- "$bin" estimate --hf-config "$fixtures/hf/llama-3-8b.config.json" --gpus 8 --zero 3
check hf-config-label 0 '"model_label": "llama-3-8b"' -- "$bin" estimate --hf-config "$fixtures/hf/llama-3-8b.config.json" --gpus 8 --zero 3 --format json
# A Hugging Face Hub id names the catalog entry whose config.json it is, in any case.
check hub-id 0 "^FITS: llama3-8b at seq" -- "$bin" estimate --model meta-llama/Meta-Llama-3-8B --gpus 8 --gpu h100 --zero 3 --recompute full
check hub-id-case 0 "^FITS: llama3-8b at seq" -- "$bin" estimate --model META-LLAMA/meta-llama-3-8b --gpus 8 --gpu h100 --zero 3 --recompute full
check hub-id-unknown 2 "model='meta-llama/Meta-Llama-3-8B-Instrukt' is not in the catalog \(did you mean 'meta-llama/Meta-Llama-3-8B-Instruct'\?\)" -- \
  "$bin" estimate --model meta-llama/Meta-Llama-3-8B-Instrukt
# DeepSpeed's bf16 is shown as DeepSpeed means it, not as trainfit's regime name.
check deepspeed-bf16 0 "micro-batch 1, bf16 mixed \(bf16 weights, fp32 master\) " -- "$bin" estimate --model llama3-8b --framework deepspeed --precision bf16 --gpus 8 --zero 3
check min-gpus 0 "^[0-9]+$" -- "$bin" min-gpus --model llama3-70b --seq 8192 --zero 3 --recompute full --gpus-per-node 8
check min-gpus-none 1 "no GPU count fits" -- "$bin" min-gpus --model llama3-70b --zero 0
# With TP and no --gpus, min-gpus starts from the layout's smallest count; the answer must not
# depend on the GPUs asked (the same request at --gpus 64 is the independent reference).
tp_reference=$("$bin" min-gpus --model llama3-70b --tp 8 --seq 8192 --zero 3 --recompute full --gpus 64)
check min-gpus-tp-without-gpus 0 "^${tp_reference}\$" -- "$bin" min-gpus --model llama3-70b --tp 8 --seq 8192 --zero 3 --recompute full
check sweep 0 "per-GPU memory vs GPU count" -- "$bin" sweep --model llama3-8b --zero 3 --gpus 8
check sweep-csv 1 "^gpus,1,4096," -- "$bin" sweep --model llama3-8b --zero 3 --format csv --over gpus
check models 0 "llama3-405b" -- "$bin" models
check gpus 0 "h100 .* 79.65" -- "$bin" gpus
check fields 0 '^\| `seq_length` \| `--seq`' -- "$bin" fields
check models-json 0 '"parameters": 8030261248' -- "$bin" models --format json
# Bad input: exit 2 and one clear line.
check bad-seq 2 "seq_length='abc' is not valid; accepted: integer" -- "$bin" estimate --model llama3-8b --seq abc
check neg-gpus 2 "num_gpus=-8 is not valid" -- "$bin" estimate --model llama3-8b --gpus -8
check unknown-model 2 "did you mean" -- "$bin" estimate --model llama-3-8 --gpus 8
check unknown-gpu 2 "gpu='h1000' is not in the catalog \(did you mean 'h100'\?\)" -- "$bin" estimate --model llama3-8b --gpu h1000
check unknown-flag 2 "unknown option '--sequence'" -- "$bin" estimate --model llama3-8b --sequence 5
check unknown-command 2 "did you mean 'estimate'" -- "$bin" estimat
check no-command 2 "usage" -- "$bin"
check bad-json 2 "malformed JSON at byte" -- bash -c "echo '{\"model\": }' | '$bin' estimate --request -"
check unknown-field 2 "unknown field 'gpus_count'.*known fields" -- bash -c "echo '{\"gpus_count\": 4}' | '$bin' estimate --request -"
check heads 2 "num_heads=7 is not valid; accepted: a divisor of hidden_dim=4096" -- "$bin" estimate --model llama3-8b --heads 7
check kv-heads 2 "num_kv_heads=3" -- "$bin" estimate --model llama3-8b --kv-heads 3
check tp-heads 2 "tensor_parallel=5" -- "$bin" estimate --model llama3-8b --tp 5 --gpus 5
check missing-file 2 "request='/nonexistent.json' cannot be read" -- "$bin" estimate --request /nonexistent.json
check bad-format 2 "format='xml'" -- "$bin" estimate --model llama3-8b --format xml
# --config: a framework's own file (docs/config-files.md). Whether the step fits is the
# model's business: these check that the file is read (exit 0 or 1) and what is printed.
fw=$fixtures/frameworks
runs() { "$@"; local rc=$?; [[ $rc -le 1 ]]; }
check config-deepspeed 0 "note: config .*\(deepspeed\): ignored \(no effect on memory\): .*scheduler" -- \
  runs "$bin" estimate --config "$fw/deepspeed_zero3_offload.json" --model llama3-8b --gpus 8
check config-torchtune 0 "llama3-8b" -- runs "$bin" estimate --config "$fw/torchtune_llama3_1_8B_lora_single_device.yaml" --gpus 1 --seq 2048
check config-torchtitan 0 "\(torchtitan\): ignored .*optimizer.lr" -- runs "$bin" estimate --config "$fw/torchtitan_llama3_8b.toml" --gpus 8
check config-megatron 0 "--global-batch-size=128 gives num_microbatches=64" -- runs "$bin" estimate --config "$fw/megatron_llama3_8b.args" --gpus 8
check config-override 0 '"zero_stage": 2' -- runs "$bin" estimate --config "$fw/deepspeed_zero3_offload.json" --model llama3-8b --gpus 8 --zero 2 --offload-params false --format json
check config-batch 2 "train_batch_size=256 disagrees with gradient_accumulation_steps=8" -- \
  "$bin" estimate --config "$fw/deepspeed_zero3_offload.json" --model llama3-8b --gpus 16
check config-dir 2 "not a regular file" -- "$bin" estimate --config "$fw"
check config-missing 2 "config=/nonexistent.yaml: not found" -- "$bin" estimate --config /nonexistent.yaml
tmp=$(mktemp -d)
mkfifo "$tmp/fifo.toml"
head -c 2000000 /dev/zero | tr '\0' '#' >"$tmp/huge.yaml"
printf 'model:\n  _component_: [unclosed\n' >"$tmp/bad.yaml"
check config-fifo 2 "not a regular file" -- timeout 10 "$bin" estimate --config "$tmp/fifo.toml"
check config-huge 2 "accepted: at most 1048576" -- "$bin" estimate --config "$tmp/huge.yaml"
check config-malformed 2 "malformed YAML at line [0-9]+, column [0-9]+" -- "$bin" estimate --config "$tmp/bad.yaml"
check config-unknown-model 2 "is not a model trainfit knows" -- bash -c "printf 'model:\n  _component_: torchtune.models.gemma.gemma_2b\n' >'$tmp/g.yaml'; '$bin' estimate --config '$tmp/g.yaml'"
rm -rf "$tmp"
# Nothing crashes on odd input.
for args in "--seq 0" "--hidden 1 --layers 1 --heads 1" "--micro-batch 1048576 --seq 1024" "--gpu-memory-gb 1e-9" \
            "--params-b 1e5 --layers 100000 --hidden 1048576" "--gpus 1048576 --zero 3"; do
  # shellcheck disable=SC2086
  out=$("$bin" estimate --model llama3-8b $args 2>&1); rc=$?
  if [[ $rc -gt 2 ]] || grep -qiwE "nan|-nan|inf|-inf" <<<"$out"; then
    echo "FAIL odd input '$args': rc $rc"; echo "$out" | tail -3; failures=$((failures + 1))
  else pass=$((pass + 1)); fi
done
echo "$pass passed, $failures failed"
[[ $failures -eq 0 ]]
