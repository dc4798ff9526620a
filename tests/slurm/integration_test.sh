#!/usr/bin/env bash
# Integration tests on a real loopback cluster (munged + slurmctld + slurmd, as root):
# both plugins loaded from the build tree, driven through the real sbatch, salloc,
# srun and scontrol. Usage: integration_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
trainfit=$build/cli/trainfit
dir=$(mktemp -d /tmp/trainfit-slurm.XXXXXX)
source "$here/cluster.sh"
pass=0; failures=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
fail() { failures=$((failures + 1)); echo "FAIL $1"; shift; printf '     %s\n' "$@"; }
finish() { cluster_stop "$dir"; echo "$pass passed, $failures failed"; [[ $failures -eq 0 ]] && rm -rf "$dir"; }
trap finish EXIT

if [[ $(id -u) -ne 0 ]]; then echo "integration_test.sh: needs root (munged, slurmctld, slurmd)"; exit 1; fi

cat > "$dir/trainfit.conf" <<CONF
# default partition: reject; "elastic": resize up to 64 GPUs; "strict": annotation required
action = reject
headroom = 0
default_gpu = h100
gpus_per_node = 64
resize_max_gpus = 64
audit_log = $dir/audit.jsonl
on_error = open
partition.elastic.action = resize
partition.strict.require_annotation = true
CONF
cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
: > "$dir/empty-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
audit_lines() { [[ -f $dir/audit.jsonl ]] && wc -l < "$dir/audit.jsonl" || echo 0; }
job_count() { squeue -h -a -o %i | wc -l; }
big=(--llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full)

# 1. A job that fits is accepted, silently.
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-seq=4096 --llm-zero=3 --wrap "sleep 1" 2>&1); rc=$?
if [[ $rc -eq 0 && $out =~ ^Submitted\ batch\ job\ [0-9]+$ ]]; then ok "llama3-8b seq 4096 ZeRO-3 on 8 x H100 accepted"
else fail "llama3-8b accepted" "rc=$rc" "$out"; fi

# 2. Llama-3-70B at seq 8192 on 8 x H100 is rejected with min_gpus_to_fit.
expected=$("$trainfit" min-gpus --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 64)
before=$(job_count)
out=$(sbatch --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
if [[ $rc -eq 1 && $out == *"llama3-70b at seq 8192 needs"*"on 8 x H100"*"min_gpus_to_fit=$expected"* && $(job_count) -eq $before ]]; then
  ok "llama3-70b seq 8192 on 8 x H100 rejected (min_gpus_to_fit=$expected)"
else fail "llama3-70b rejected" "rc=$rc" "$out"; fi

# 3. With action = resize (partition elastic) the same job is accepted at min_gpus_to_fit.
out=$(sbatch -p elastic --parsable --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
job=$(tail -1 <<<"$out")
shown=$(scontrol show job "$job" 2>/dev/null | grep -o "TresPerJob=[^ ]*")
if [[ $rc -eq 0 && $shown == "TresPerJob=gres:gpu:h100:$expected" && $out == *"resized from 8 to $expected"*"global batch"* ]]; then
  ok "resize: job $job now $shown"
else fail "resize" "rc=$rc" "$out" "$shown"; fi

# 4. The --comment annotation works with no SPANK plugin loaded.
out=$(SLURM_CONF=$dir/slurm-nospank.conf sbatch --gpus=h100:8 \
        --comment="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full" --wrap true 2>&1); rc=$?
if [[ $rc -eq 1 && $out == *"min_gpus_to_fit=$expected"* ]]; then ok "comment annotation without the SPANK plugin rejected"
else fail "comment annotation" "rc=$rc" "$out"; fi
out=$(SLURM_CONF=$dir/slurm-nospank.conf sbatch --gpus=h100:8 \
        --comment="trainfit: model=llama3-8b seq=4096 zero=3" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "comment annotation that fits accepted" || fail "comment accepted" "rc=$rc" "$out"

# 5. An unannotated job is untouched and not audited.
lines=$(audit_lines)
out=$(SLURM_CONF=$dir/slurm-nospank.conf sbatch --parsable -H --gpus=h100:3 --wrap true 2>&1); rc=$?
shown=$(scontrol show job "$out" 2>/dev/null | grep -o "TresPerJob=[^ ]*")
if [[ $rc -eq 0 && $shown == "TresPerJob=gres:gpu:h100:3" && $(audit_lines) -eq $lines ]]; then ok "unannotated job untouched"
else fail "unannotated job" "rc=$rc" "$out" "$shown"; fi
scontrol cancel "$out" 2>/dev/null

# 6. A malformed value fails at once; nothing is submitted.
before=$(job_count); lines=$(audit_lines)
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-seq=abc --wrap true 2>&1); rc=$?
if [[ $rc -ne 0 && $out == *"--llm-seq='abc' is not valid; accepted: integer"* && $(job_count) -eq $before && $(audit_lines) -eq $lines ]]; then
  ok "--llm-seq=abc fails before submission"
else fail "--llm-seq=abc" "rc=$rc" "$out"; fi
out=$(sbatch --gpus=h100:8 --llm-model=llama3-7b --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"did you mean"* ]] && ok "unknown model fails with a suggestion" || fail "unknown model" "rc=$rc" "$out"

# 7. --llm-check prints min_gpus_to_fit; sbatch stays silent otherwise.
out=$(sbatch --gpus=h100:32 "${big[@]}" --llm-check --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"min_gpus_to_fit=$expected on h100"* ]] && ok "--llm-check prints min_gpus_to_fit" || fail "--llm-check" "rc=$rc" "$out"

# 7b. --llm-hf-config is read on the submit host; the geometry travels with the job.
out=$(sbatch --gpus=h100:8 --llm-hf-config="$here/../fixtures/hf/llama-3-70b.config.json" --llm-seq=8192 \
        --llm-zero=3 --llm-recompute=full --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"at seq 8192 needs"*"min_gpus_to_fit=$expected"* ]] && ok "--llm-hf-config geometry reaches job_submit" \
  || fail "--llm-hf-config" "rc=$rc" "$out"
out=$(sbatch --gpus=h100:8 --llm-hf-config=/nonexistent.json --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"--llm-hf-config='/nonexistent.json' cannot be read"* ]] && ok "--llm-hf-config unreadable fails at once" \
  || fail "--llm-hf-config unreadable" "rc=$rc" "$out"

# 8. The partition that requires an annotation refuses an unannotated job.
out=$(sbatch -p strict --gpus=h100:8 --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"requires an LLM training annotation"* ]] && ok "require_annotation" || fail "require_annotation" "rc=$rc" "$out"

# 9. srun inside a salloc allocation: a step that fits runs, one too big is refused.
out=$(timeout 120 salloc --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 \
        srun --llm-model=llama3-8b --llm-zero=3 echo step-ran 2>&1); rc=$?
[[ $rc -eq 0 && $out == *step-ran* ]] && ok "srun step that fits runs" || fail "srun fits" "rc=$rc" "$out"
out=$(timeout 120 salloc --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 \
        srun "${big[@]}" echo step-ran 2>&1); rc=$?
if [[ $rc -ne 0 && $out != *step-ran* && $out == *"min_gpus_to_fit=$expected"*"step refused"* ]]; then ok "srun step predicted to OOM refused"
else fail "srun refused" "rc=$rc" "$out"; fi

# A step that asks for fewer GPUs than the allocation is checked against its own count.
out=$(timeout 120 salloc --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 \
        srun --gpus=h100:1 --llm-model=llama3-8b --llm-zero=3 echo step-ran 2>&1); rc=$?
[[ $rc -ne 0 && $out != *step-ran* && $out == *"on 1 x H100"*"step refused"* ]] && ok "srun --gpus=1 step checked on its own GPUs" \
  || fail "srun own GPUs" "rc=$rc" "$out"

# 9b. salloc and srun allocations pass job_submit too: rejected before any allocation.
out=$(timeout 60 salloc --gpus=h100:8 "${big[@]}" true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"min_gpus_to_fit=$expected"* ]] && ok "salloc allocation rejected" || fail "salloc" "rc=$rc" "$out"
out=$(timeout 60 srun --gpus=h100:8 "${big[@]}" echo ran 2>&1); rc=$?
[[ $rc -ne 0 && $out != *ran* && $out == *"min_gpus_to_fit=$expected"* ]] && ok "srun allocation rejected" \
  || fail "srun allocation" "rc=$rc" "$out"

# 10. scontrol update is checked the same way (job_modify).
job=$(sbatch --parsable -H --gpus=h100:32 "${big[@]}" --wrap true 2>&1)
out=$(scontrol update jobid="$job" TresPerJob=gres:gpu:h100:8 \
        Comment="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full" 2>&1); rc=$?
shown=$(scontrol show job "$job" | grep -o "TresPerJob=[^ ]*")
[[ $rc -ne 0 && $shown == "TresPerJob=gres:gpu:h100:32" ]] && ok "scontrol update to 8 GPUs refused" || fail "job_modify" "rc=$rc" "$out" "$shown"
out=$(scontrol update jobid="$job" Comment="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full" 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "scontrol update without a GPU change passes" || fail "update without GPUs" "rc=$rc" "$out"
scontrol cancel "$job" 2>/dev/null

# 11. The audit log has exactly one line per decision, each valid JSON.
# Decisions: accept(1) reject(2) resize(3) comment reject + accept(4) check accept(7)
# hf-config reject (7b) strict reject(8) salloc accept x3 (9) salloc + srun reject (9b)
# submit accept + modify reject (10) = 15.
lines=$(audit_lines)
valid=$(/usr/bin/python3 -c "import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)['action']))" "$dir/audit.jsonl")
if [[ $lines -eq 15 && $valid -eq 15 ]]; then ok "audit log: one JSON line per decision (15)"
else fail "audit log" "lines=$lines valid=$valid" "$(cut -c1-160 "$dir/audit.jsonl")"; fi
grep -q '"action":"resize".*"resized_to":'"$expected" "$dir/audit.jsonl" && ok "audit records resized_to" || fail "audit resized_to"

# 12. slurmctld is alive and logged no trainfit error.
if scontrol ping | grep -q UP && ! grep -q "job_submit/trainfit: internal" "$dir/log/slurmctld.log"; then ok "slurmctld healthy"
else fail "slurmctld health" "$(tail -5 "$dir/log/slurmctld.log")"; fi

# 13. plugstack.conf arguments: unknown keys are errors.
echo "required $build/plugin/spank_trainfit.so default_gpu=h100 colour=red" > "$dir/bad-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/bad-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-badspank.conf"
out=$(SLURM_CONF=$dir/slurm-badspank.conf sbatch --gpus=h100:8 --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"unknown argument 'colour=red'"* ]] && ok "plugstack.conf: unknown argument refused" \
  || fail "plugstack arguments" "rc=$rc" "$out"

# 14. An unwritable audit log is reported once and does not stop admission.
cluster_stop "$dir"
sed -i "s|^audit_log = .*|audit_log = /nonexistent-dir/audit.jsonl|" "$dir/trainfit.conf"
cluster_start "$dir" "$build/plugin" trainfit || fail "restart with unwritable audit log"
rcs=""
for _ in 1 2 3; do
  sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1; rcs+="$?"
done
reported=$(grep -c "audit log disabled" "$dir/log/slurmctld.log")
[[ $rcs == 000 && $reported -eq 1 ]] && ok "unwritable audit log: reported once, jobs admitted" \
  || fail "unwritable audit log" "rcs=$rcs reported=$reported"

# 15. An invalid trainfit.conf is named in slurmctld's log with its line; on_error = open admits.
cluster_stop "$dir"
printf 'action = deny\n' > "$dir/trainfit.conf"
cluster_start "$dir" "$build/plugin" trainfit || fail "restart with an invalid trainfit.conf"
out=$(sbatch -H --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
if grep -q "trainfit.conf line 1: action='deny' is not valid; accepted: reject|resize|warn" "$dir/log/slurmctld.log" &&
   [[ $rc -eq 0 ]]; then ok "invalid trainfit.conf logged with its line; jobs admitted (on_error = open)"
else fail "invalid trainfit.conf" "rc=$rc" "$(grep trainfit "$dir/log/slurmctld.log" | tail -2)"; fi
