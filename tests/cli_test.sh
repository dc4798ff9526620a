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
# Files: one wording everywhere, FIELD='PATH': REASON.
check missing-file 2 "^trainfit: request='/nonexistent.json': not found$" -- "$bin" estimate --request /nonexistent.json
check hf-missing 2 "^trainfit: hf-config='/nonexistent.json': not found$" -- "$bin" estimate --hf-config /nonexistent.json
check catalog-dir-missing 2 "^trainfit: catalog-dir='/nonexistent-dir': not found; accepted: " -- "$bin" estimate --catalog-dir /nonexistent-dir --model llama3-8b
check report-missing 2 "audit='/nonexistent.jsonl': not found$" -- "$bin" report --audit /nonexistent.jsonl
check policy-conf-missing 2 "^trainfit: conf='/nonexistent.conf': not found$" -- "$bin" policy --model llama3-8b --conf /nonexistent.conf
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
check config-dir 2 "^trainfit: config='$fw': is a directory, not a regular file$" -- "$bin" estimate --config "$fw"
check config-missing 2 "^trainfit: config='/nonexistent.yaml': not found$" -- "$bin" estimate --config /nonexistent.yaml
tmp=$(mktemp -d)
mkfifo "$tmp/fifo.toml"
head -c 2000000 /dev/zero | tr '\0' '#' >"$tmp/huge.yaml"
printf 'model:\n  _component_: [unclosed\n' >"$tmp/bad.yaml"
check config-fifo 2 "not a regular file" -- timeout 10 "$bin" estimate --config "$tmp/fifo.toml"
check config-huge 2 "accepted: at most 1048576" -- "$bin" estimate --config "$tmp/huge.yaml"
check config-malformed 2 "malformed YAML at line [0-9]+, column [0-9]+" -- "$bin" estimate --config "$tmp/bad.yaml"
check config-unknown-model 2 "is not a model trainfit knows" -- bash -c "printf 'model:\n  _component_: torchtune.models.gemma.gemma_2b\n' >'$tmp/g.yaml'; '$bin' estimate --config '$tmp/g.yaml'"
# --hf-config DIR: a Hugging Face model folder, its config.json read (as transformers does);
# the same geometry as the file itself.
mkdir "$tmp/llama" "$tmp/broken"
cp "$fixtures/hf/llama-3-8b.config.json" "$tmp/llama/config.json"
same() {  # same NAME A B: A and B are equal
  if [[ "$2" == "$3" ]]; then pass=$((pass + 1)); else echo "FAIL $1: '$2' differs from '$3'" | head -5; failures=$((failures + 1)); fi
}
same hf-dir "$("$bin" estimate --hf-config "$tmp/llama" --gpus 8 --zero 3 --format csv 2>&1)" \
  "$("$bin" estimate --hf-config "$fixtures/hf/llama-3-8b.config.json" --gpus 8 --zero 3 --format csv 2>&1)"
printf '{"model_type": "llama",\n "hidden_size": }\n' >"$tmp/broken/config.json"
check hf-dir-malformed 2 "^trainfit: hf-config='$tmp/broken/config.json': malformed JSON at byte [0-9]+: .+" -- "$bin" estimate --hf-config "$tmp/broken"
check hf-dir-empty 2 "^trainfit: hf-config='$tmp/empty/config.json': not found$" -- bash -c "mkdir -p '$tmp/empty' && '$bin' estimate --hf-config '$tmp/empty'; rc=\$?; rmdir '$tmp/empty'; exit \$rc"
# plot --out: the error names the user's path and why, never the temporary file beside it.
check plot-out-folder 2 "^trainfit: out='/nonexistent/x.svg': cannot be written: No such file or directory$" -- \
  "$bin" plot --model llama3-8b --out /nonexistent/x.svg
check_not() {  # check_not NAME PATTERN -- command...: the output lacks PATTERN
  local name=$1 pattern=$2; shift 3
  if grep -qE -- "$pattern" <<<"$("$@" 2>&1)"; then echo "FAIL $name: output has /$pattern/"; failures=$((failures + 1)); else pass=$((pass + 1)); fi
}
check_not plot-out-no-temporary "\.tmp\." -- "$bin" plot --model llama3-8b --out /nonexistent/x.svg
rm -rf "$tmp"
# Offload: host RAM per node is the per-GPU figure times the request's GPUs per node (4 here);
# without --gpus-per-node the table says which count it assumed.
offload=$("$bin" estimate --model llama3-8b --gpus 16 --gpu h100 --zero 3 --offload-optimizer --gpus-per-node 4 2>&1)
per_gpu=$(awk '$1 == "per" && $2 == "GPU" {print $3}' <<<"$offload")
per_node=$(awk '$1 == "per" && $2 == "node" {print $3}' <<<"$offload")
if awk -v g="$per_gpu" -v n="$per_node" 'BEGIN { d = n - 4 * g; exit !(g > 0 && d < 0.02 && d > -0.02) }' &&
   grep -q "4 GPUs on a node" <<<"$offload"; then pass=$((pass + 1))
else echo "FAIL offload-per-node: per GPU '$per_gpu', per node '$per_node'"; echo "$offload" | grep -A2 "host RAM"; failures=$((failures + 1)); fi
check offload-assumed 0 "^  per node .* 8 GPUs per node assumed \(gpus_per_node not given\)" -- \
  runs "$bin" estimate --model llama3-8b --gpus 16 --gpu h100 --zero 3 --offload-optimizer
check offload-csv 0 "^host,offload_per_node,[0-9]" -- "$bin" estimate --model llama3-8b --gpus 16 --gpu h100 --zero 3 --offload-optimizer --format csv
# One of a thing is singular: a global batch of one sequence.
check one-sequence 0 "global_batch +1 sequence\$" -- "$bin" estimate --model gpt2 --gpus 1 --micro-batch 1
# A catalog model and an HF config both give the geometry: refused, naming both; the
# geometry fields given one by one still override the model's (docs/api.md).
hf=$fixtures/hf/llama-3-70b.config.json
check model-and-hf 2 "^trainfit: --model='llama3-8b' and --hf-config='$hf' both give the model's geometry; accepted: one or the other" -- \
  "$bin" estimate --model llama3-8b --hf-config "$hf"
check model-and-hf-min-gpus 2 "--model='llama3-8b' and --hf-config=" -- "$bin" min-gpus --model llama3-8b --hf-config "$hf"
check model-override-layers 0 '"num_layers": 16' -- runs "$bin" estimate --model llama3-8b --layers 16 --format json
# No command takes a positional argument: a stray word is refused, not ignored.
for command in estimate min-gpus sweep plot policy; do
  check "stray-word-$command" 2 "^trainfit: unexpected argument 'extra'; see 'trainfit $command --help'$" -- \
    "$bin" "$command" --model llama3-8b extra
done
for command in models gpus fields serve; do
  check "stray-word-$command" 2 "^trainfit: unexpected argument 'extra'; see 'trainfit $command --help'$" -- \
    timeout 10 "$bin" "$command" extra
done
# min-gpus without sharding: more GPUs cannot help, and the flags that shard are named.
check min-gpus-unsharded 1 "hint: adding GPUs does not reduce per-GPU memory without sharding; shard with --zero 3 \(or --sharding fsdp-full\), --tp N or --pp N" -- \
  "$bin" min-gpus --model llama3-8b
check min-gpus-unsharded-reason 1 "no GPU count fits: nothing is sharded" -- "$bin" min-gpus --model llama3-8b
check min-gpus-sharded-fits 0 "^[0-9]+$" -- "$bin" min-gpus --model llama3-8b --zero 3
# --format json: the count, the rule and the bound, parsed; none is null with its reason.
check min-gpus-json 0 '"min_gpus_to_fit": [0-9]+,' -- "$bin" min-gpus --model llama3-8b --zero 3 --format json
check min-gpus-json-none 1 '"min_gpus_to_fit": null' -- "$bin" min-gpus --model llama3-8b --format json
check min-gpus-format-bad 2 "format='table' is not valid; accepted: number\|json" -- "$bin" min-gpus --model llama3-8b --format table
# One field, one value: two spellings of it are refused as a repeated flag is.
check two-spellings 2 "seq_length is given twice, as --seq and --seq_length; give it once" -- \
  "$bin" estimate --model llama3-8b --seq 4096 --seq_length 8192
check hyphenated-json-name 0 "at seq 8192" -- "$bin" estimate --model llama3-8b --zero 3 --num-gpus 8 --recompute full --seq-length 8192
# Framework spellings name trainfit's flag.
check spelling-batch-size 2 "unknown option '--batch-size' \(trainfit's word is '--micro-batch'" -- \
  "$bin" estimate --model llama3-8b --batch-size 4
check spelling-megatron-tp 2 "trainfit's word is '--tp', Megatron's tensor parallelism" -- \
  "$bin" estimate --model llama3-8b --tensor-model-parallel-size 2
# trainfit help CMD = trainfit CMD --help; an unknown CMD gets "did you mean".
for command in estimate report serve check-config; do
  same "help-$command" "$("$bin" help "$command" 2>&1)" "$("$bin" "$command" --help 2>&1)"
done
check help-unknown 2 "unknown command 'estimat' \(did you mean 'estimate'\?\)" -- "$bin" help estimat
# --help in groups: each flag under its own caption.
section_of() {  # the caption above FLAG in 'trainfit CMD --help'
  "$bin" "$1" --help | awk -v flag="$2" '/^[^ ].*:$/ { caption = $0 } $1 == flag { print caption; exit }'
}
for pair in estimate:--layers:model estimate:--seq:training estimate:--zero:"parallelism and sharding" \
            estimate:--gpu:cluster estimate:--format:output estimate:--endpoint:"endpoint (ask a trainfit service)" \
            estimate:--lora-rank:"adapters (LoRA, QLoRA)" estimate:--hf-config:"request files" plot:--out:output sweep:--over:output; do
  IFS=: read -r command flag caption <<<"$pair"
  same "help-group-$command$flag" "$(section_of "$command" "$flag")" "$caption:"
done
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
