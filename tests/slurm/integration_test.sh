#!/usr/bin/env bash
# Integration tests on a real loopback cluster (munged + slurmctld + slurmd, as root):
# both plugins loaded from the build tree, driven through the real sbatch, salloc,
# srun and scontrol, as root and as an ordinary user. Expected numbers come from the
# trainfit CLI or from the request itself. Usage: integration_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
trainfit=$build/cli/trainfit
dir=$(mktemp -d /tmp/trainfit-slurm.XXXXXX)
chmod 755 "$dir"
cd "$dir"  # accepted jobs write slurm-N.out into the submit directory: here, not the checkout
source "$here/cluster.sh"
source "$here/checks.sh"
user=trainfit-ci
# On a 2-core CI host one salloc RPC in a run's hundreds once went past Slurm's default 10 s
# (26.05 in its release root; not reproduced in 3 quiet runs): a slow reply is not a refusal.
export CLUSTER_MESSAGE_TIMEOUT=30
# Heterogeneous jobs need the backfill scheduler (sched/builtin refuses them: "Requested
# operation not supported on this system").
export CLUSTER_SCHEDULER=sched/backfill

cleanup() {
  cluster_stop "$dir"
  mountpoint -q "$dir/small" && umount "$dir/small"
}
trap 'checks_finish cleanup' EXIT
# The tmpfs of the audit-log test is mounted before any daemon starts: the daemons run in a
# private mount namespace (cluster.sh, cluster_exec), which copies the mounts there at its start.
mkdir -p "$dir/small"
mount -t tmpfs -o size=64k,mode=0755 tmpfs "$dir/small" 2>/dev/null

if [[ $(id -u) -ne 0 ]]; then echo "integration_test.sh: needs root (munged, slurmctld, slurmd)"; exit 1; fi
id "$user" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$user"
as_user() { runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
as_who() { local who=$1; shift; if [[ $who == root ]]; then "$@"; else as_user "$@"; fi; }  # as_who root|USER CMD...

# trainfit.conf's reloads, as slurmctld's log shows them (the plugin's watcher thread looks
# once a second and leaves a file changed less than a second ago for the next look).
conf_events() { grep -cE "job_submit/trainfit: (reloaded|.*(changed but is not valid|is now empty|was removed))" "$dir/log/slurmctld.log" 2>/dev/null; }
conf_seen=0
await_reload() {
  for _ in $(seq 80); do (( $(conf_events) > conf_seen )) && break; sleep 0.1; done
  conf_seen=$(conf_events)
}
write_conf() {
  conf_seen=$(conf_events)
  cat > "$dir/trainfit.conf" <<CONF
# default partition: reject; "elastic": resize; "strict": annotation required. Judged on the point
# figure (refuse_when = likely) unless a section says otherwise: most checks are about what the
# gate reads of a job, not about the range; section 8 runs the default (certain).
${refuse_line-refuse_when = likely}
action = reject
headroom = 0
default_gpu = h100
gpus_per_node = 64
resize_max_gpus = 64
audit_log = ${audit:-$dir/audit.jsonl}
on_error = open
gpu_alias.h100_80g = h100
partition.elastic.action = resize
partition.strict.require_annotation = true
partition.elastic8.action = resize
partition.elastic8.gpus_per_node = 8
partition.whole.require_annotation = true
$*
CONF
}
write_conf
nvml=nvidia_h100_80gb_hbm3
# Slurm's plugin folder as links, with a decoy job_submit_trainfit.so in it (a copy of the
# build's, as the trainfit-slurm package would install it): slurmctld must load the build's.
sysplugins=$dir/system-plugins
mkdir -p "$sysplugins"
ln -s "$(cluster_system_plugin_dir)"/* "$sysplugins/"
cp "$build/plugin/job_submit_trainfit.so" "$sysplugins/job_submit_trainfit.so"
export CLUSTER_SYSTEM_PLUGIN_DIR=$sysplugins
cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
loaded=$(cluster_loaded_job_submit "$dir")
# In a release's root (tests/slurm/releases.sh) /proc/PID/maps names the file by its path on
# the host, the overlay's mount point in front: the build's path ends it, the decoy's does not.
[[ $loaded == *"$build/plugin/job_submit_trainfit.so" && $loaded != *"$sysplugins/"* ]] \
  && ok "PluginDir: slurmctld loaded the build's job_submit_trainfit.so, not the one in Slurm's plugin folder" \
  || fail "PluginDir order" "slurmctld mapped: ${loaded:-none}" "$(grep PluginDir "$dir/slurm.conf")"
: > "$dir/empty-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
chmod -R a+rX "$dir"
nospank() { SLURM_CONF=$dir/slurm-nospank.conf "$@"; }
# The plugin's writer thread appends a decision's line within a few ms: let it settle.
settle() { sleep 0.3; }
audit_lines() { settle; [[ -f $dir/audit.jsonl ]] && wc -l < "$dir/audit.jsonl" || echo 0; }
job_count() { squeue -h -a -o %i | wc -l; }
field() { scontrol show job -o "$2" 2>/dev/null | grep -o "\b$1=[^ ]*" | head -1 | cut -d= -f2-; }
count_of() { local text=${1##*:}; echo "${text##*=}"; }  # "gres:gpu:h100:24" -> 24
# The resized job's shape submitted again, unheld and unannotated, as its owner would: Slurm's
# own checks (tasks >= nodes, GPUs per task on a node, ...) must take it. "" when it does.
resubmit_shape() {  # resubmit_shape JOB PARTITION
  local job=$1 part=$2 args=() value out
  value=$(field NumNodes "$job"); args+=(-N "${value%%-*}")
  value=$(field NumTasks "$job"); [[ -n $value && $value != N/A ]] && args+=(-n "$value")
  value=$(field TresPerJob "$job"); [[ -n $value ]] && args+=("--gpus=${value#*gpu:}")
  value=$(field TresPerNode "$job"); [[ -n $value ]] && args+=("--gpus-per-node=${value#*gpu:}")
  value=$(field TresPerTask "$job"); [[ -n $value ]] && args+=("--gpus-per-task=${value#*gpu:}")
  out=$(nospank sbatch --parsable -p "$part" "${args[@]}" --wrap true 2>&1) || { echo "sbatch ${args[*]}: $out"; return; }
  scancel "$(tail -1 <<<"$out")" 2>/dev/null
}
# What Slurm grants a (resized) job as it stands, and what the message said: sets said,
# per_job, per_node, per_task, nodes, tasks and granted.
read_grant() {  # read_grant JOB SBATCH_OUTPUT
  said=$(grep -o 'resized from [0-9]* to [0-9]*' <<<"$2" | awk '{print $5}')
  per_job=$(field TresPerJob "$1"); per_node=$(field TresPerNode "$1"); per_task=$(field TresPerTask "$1")
  nodes=$(field NumNodes "$1"); nodes=${nodes%%-*}; tasks=$(field NumTasks "$1")
  if [[ -n $per_job ]]; then granted=$(count_of "$per_job")
  elif [[ -n $per_node ]]; then granted=$(( $(count_of "$per_node") * nodes ))
  else granted=$(( $(count_of "$per_task") * tasks )); fi
}
# slurmctld writes GPUs "gres:gpu:..." up to 23.02 and "gres/gpu:..." from 23.11: compared in one.
colon() { echo "${1//gres\/gpu/gres:gpu}"; }
last_audit() { settle; tail -1 "$dir/audit.jsonl"; }
json() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
big=(--llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full)
# The gate's min_gpus_to_fit is found for the likely range's high end (resize_to = high, the default).
min64=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 64)
min8=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 8)

# ---- The basics ----
# sbatch --help lists the plugin's options: a flag with no trailing "=" (Slurm prints --NAME=ARGINFO
# for any arginfo that is not NULL), an option with its value's name.
help=$(sbatch --help 2>&1)
if grep -qE -- '--llm-check([[:space:]]|$)' <<<"$help" && ! grep -q -- '--llm-check=' <<<"$help" &&
   grep -qE -- '--llm-model=[A-Z]' <<<"$help"; then
  ok "sbatch --help: --llm-check is a flag (no trailing '='), --llm-model takes a value"
else
  fail "sbatch --help's --llm-* options" "$(grep -- '--llm-' <<<"$help" | head -3)"
fi
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-seq=4096 --llm-zero=3 --wrap "sleep 1" 2>&1); rc=$?
detail="rc=$rc $out"; check "llama3-8b seq 4096 ZeRO-3 on 8 x H100 accepted, silently" \
  test $rc -eq 0 -a "${out%% *}" = Submitted -a "$(wc -l <<<"$out")" -eq 1

before=$(job_count)
out=$(sbatch --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
first="sbatch: error: trainfit: llama3-70b at seq 8192 needs"
detail="rc=$rc $out"
check "too few GPUs: rejected with min_gpus_to_fit=$min64 and Slurm's GRES error line" \
  test $rc -eq 1 -a "$(job_count)" -eq "$before" -a "$(sed -n 1p <<<"$out" | cut -c1-${#first})" = "$first" \
  -a "$(sed -n 2p <<<"$out")" = "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification"
[[ $out == *"on 8 x H100 (79.6 GiB usable); min_gpus_to_fit=$min64 for the likely high end"* ]] && ok "message names the GPUs and min_gpus_to_fit" || fail "message" "$out"

out=$(nospank sbatch --gpus=h100:8 --comment="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"min_gpus_to_fit=$min64"* ]] && ok "comment annotation without the SPANK plugin rejected" || fail "comment annotation" "rc=$rc" "$out"

# A job that fits at no GPU count (DDP, every activation kept) hears a way out in its own
# options, and the way out, typed back into sbatch, is accepted.
out=$(sbatch -H --gpus=h100:8 --llm-model=llama3-70b --llm-seq=8192 --wrap true 2>&1); rc=$?
if [[ $rc -eq 1 && $out =~ min_gpus_to_fit=none\ for\ the\ likely\ high\ end\ \(or:\ ([^\)]*)\ fits\ on\ ([0-9]+)\) ]]; then
  way_out=${BASH_REMATCH[1]} way_gpus=${BASH_REMATCH[2]}
  read -r -a way_options <<<"$way_out"
  again=$(sbatch -H --gpus=h100:$way_gpus --llm-model=llama3-70b --llm-seq=8192 "${way_options[@]}" --wrap true 2>&1)
  [[ $again == Submitted* ]] && ok "no GPU count fits: the refusal offers '$way_out' on $way_gpus, which sbatch then accepts" \
    || fail "way out resubmitted" "$out" "$again"
else
  fail "no GPU count fits: a way out" "rc=$rc $out"
fi

lines=$(audit_lines)
out=$(nospank sbatch --parsable -H --gpus=h100:3 --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $(colon "$(field TresPerJob "$out")") == gres:gpu:h100:3 && $(audit_lines) -eq $lines ]] && ok "unannotated job untouched, not audited" \
  || fail "unannotated job" "rc=$rc" "$out"
scontrol cancel "$out" 2>/dev/null

# ---- 2. Partition lists and moves ----
out=$(nospank sbatch -p strict,gpu --gpus=h100:8 --wrap true 2>&1); rc=$?
detail="rc=$rc $out"
check "-p strict,gpu unannotated: refused with Slurm's access line" \
  test $rc -eq 1 -a "$(sed -n 2p <<<"$out")" = "sbatch: error: Batch job submission failed: Access/permission denied"
[[ $out == *"partition strict requires an LLM training annotation"* ]] && ok "the message names the partition" || fail "strict message" "$out"
out=$(nospank sbatch -H -p strict --parsable --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "a CPU job in the strict partition passes" || fail "CPU job in strict" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
out=$(sbatch -H -p elastic,gpu --parsable --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"resized from 8 to $min64"* ]] && ok "-p elastic,gpu: resized (fits in both after)" || fail "elastic,gpu" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null

job=$(nospank sbatch -H --parsable --gpus=h100:8 --wrap true 2>&1)
out=$(scontrol update job="$job" Partition=strict 2>&1); rc=$?
[[ $rc -ne 0 && $(field Partition "$job") == gpu ]] && ok "moving an unannotated job into strict refused (partition stays gpu)" \
  || fail "partition move" "rc=$rc $out" "$(field Partition "$job")"
rec=$(last_audit)
[[ $(json "$rec" "['event']") == modify && $(json "$rec" "['partition']") == strict && $(json "$rec" "['job_id']") == "$job" &&
   $(json "$rec" "['reason']") == restate_required ]] && ok "the refused move is audited with job id, partition and reason restate_required" || fail "move audit" "$rec"

# ---- 2b. Whole-node jobs hold every GPU of their nodes (as an ordinary user) ----
for args in "-p strict --exclusive" "-p strict --exclusive --gpus=0" "-p whole" "-p whole --gpus=0"; do
  lines=$(audit_lines)
  # shellcheck disable=SC2086
  out=$(nospank as_user sbatch -H $args --wrap true 2>&1); rc=$?
  rec=$(last_audit)
  [[ $rc -eq 1 && $out == *"requires an LLM training annotation for GPU jobs ("*"holds its nodes' 64 GPUs)"* &&
     $(audit_lines) -eq $((lines + 1)) && $(json "$rec" "['reason']") == annotation_required ]] \
    && ok "sbatch $args, unannotated: refused (holds 64 GPUs), audited" || fail "whole-node $args" "rc=$rc $out" "$rec"
done
out=$(as_user sbatch -H --parsable --exclusive "${big[@]}" --wrap true 2>&1); rc=$?
rec=$(last_audit)
[[ $rc -eq 0 && $(json "$rec" "['action']") == accept && $(json "$rec" "['gpus_requested']") == 64 ]] \
  && ok "--exclusive 70B at seq 8192 (min_gpus_to_fit=$min64): judged on the node's 64 GPUs, accepted, audited" \
  || fail "annotated --exclusive" "rc=$rc $out" "$rec"
scancel "$(tail -1 <<<"$out")" 2>/dev/null
grep -q "partition.elastic8: slurm.conf has no partition 'elastic8'" "$dir/log/slurmctld.log" \
  && ok "an override for a partition slurm.conf lacks is named in slurmctld's log" || fail "unknown partition override" "$(grep elastic8 "$dir/log/slurmctld.log")"

# ---- 2d. Heterogeneous jobs: the --llm-* options are the first component's ----
out=$(as_user sbatch -H --parsable --gpus=h100:64 "${big[@]}" : --gpus=h100:1 --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "hetjob: 70B on component 0's 64 GPUs, a 1-GPU helper in component 1: accepted" || fail "hetjob accept" "rc=$rc $out"
scancel "$(tail -1 <<<"$out")" 2>/dev/null
out=$(as_user sbatch -H --parsable -p elastic --gpus=h100:8 "${big[@]}" : -p elastic --gpus=h100:1 --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"min_gpus_to_fit=$min64"* && $out != *"resized"* ]] \
  && ok "hetjob in a resize partition: refused with min_gpus_to_fit=$min64, no component resized" || fail "hetjob resize" "rc=$rc $out"
out=$(nospank as_user sbatch -H --parsable -p strict --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" : -p strict --gpus=h100:1 --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "hetjob in strict, annotated by its first component's comment: accepted" || fail "hetjob strict" "rc=$rc $out"
scancel "$(tail -1 <<<"$out")" 2>/dev/null

# ---- 2c. A comment annotation and --llm-* options: one of them, or both saying the same ----
out=$(as_user sbatch -H --gpus=h100:8 --comment="trainfit: model=llama3-405b seq=131072" --llm-model=llama3-8b --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"comment annotation ('trainfit: model=llama3-405b seq=131072') and its --llm-* options (model=llama3-8b"*"disagree"* ]] \
  && ok "comment says 405b, --llm-model says 8b: refused, naming both" || fail "conflicting annotations" "rc=$rc $out"
out=$(as_user sbatch -H --parsable --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --llm-check --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"trainfit: fits: "*"min_gpus_to_fit="* ]] && ok "--llm-check with a comment annotation: the comment's verdict" \
  || fail "--llm-check + comment" "rc=$rc $out"
scancel "$(tail -1 <<<"$out")" 2>/dev/null

# ---- 3. Updates ----
lines=$(audit_lines)
out=$(scontrol update job="$job" Comment="trainfit: model=llama3-405b seq=131072" 2>&1); rc=$?
[[ $rc -ne 0 && $(audit_lines) -eq $((lines + 1)) ]] && ok "annotation update without its GPUs: refused and audited" || fail "comment update" "rc=$rc $out"
out=$(scontrol update job="$job" Comment="trainfit: model=llama3-405b seq=131072" TresPerJob=gres:gpu:h100:8 Partition=gpu 2>&1); rc=$?
[[ $rc -ne 0 && $(json "$(last_audit)" "['reason']") == too_few_gpus ]] && ok "annotation update with GPUs: checked (too few GPUs)" \
  || fail "full update" "rc=$rc $out" "$(last_audit)"
# 23.02 gave job_modify an err_msg: the refusal's reason reaches scontrol; 22.05 shows only
# Slurm's error text (the reason is in slurmctld's log and the audit line).
if (( $(cluster_release) >= 2302 )); then
  [[ $out == *"trainfit: "*"min_gpus_to_fit="* ]] && ok "the refused update's reason reaches scontrol (job_modify's err_msg): ${out%%$'\n'*}" \
    || fail "refused update's reason in scontrol" "$out"
else
  [[ $out != *"min_gpus_to_fit="* && -n $out ]] && ok "22.05: scontrol shows Slurm's error only: $out" || fail "22.05 update error" "$out"
fi
out=$(scontrol update job="$job" Comment="trainfit: model=llama3-8b zero=3" TresPerJob=gres:gpu:h100:8 Partition=gpu 2>&1); rc=$?
[[ $rc -eq 0 && $(field Comment "$job") == trainfit:* ]] && ok "annotation update that fits: applied" || fail "fitting update" "rc=$rc $out"
out=$(scontrol update job="$job" TresPerJob=gres:gpu:h100:4 2>&1); rc=$?
[[ $rc -eq 0 && $(json "$(last_audit)" "['action']") == unchecked ]] && grep -q "update not checked (by an operator): Slurm's job_modify" "$dir/log/slurmctld.log" \
  && ok "root's GPU-count-only update: passes, audited and logged as unchecked" || fail "GPU-only update" "rc=$rc $out" "$(last_audit)"
scontrol cancel "$job" 2>/dev/null

# ---- 3c. A job's owner cannot reopen the gate with scontrol update ----
job=$(as_user sbatch -H --parsable --gpus=h100:64 "${big[@]}" --wrap true 2>&1)
for change in "TresPerJob=gres:gpu:h100:8" "NumTasks=4" "TresPerNode=gres:gpu:h100:8" "Gres=gpu:h100:8" "Partition=elastic" "NumNodes=2" \
              "ReqSockets=1" "OverSubscribe=yes" "TresPerJob=gres:gpu:h100:64,gres:gpu:h100:8"; do
  lines=$(audit_lines)
  out=$(as_user scontrol update JobId="$job" $change 2>&1); rc=$?
  [[ $rc -ne 0 && $(colon "$(field TresPerJob "$job")") == gres:gpu:h100:64 && $(audit_lines) -eq $((lines + 1)) &&
     $(json "$(last_audit)" "['action']") == reject ]] && ok "owner's update $change: refused, audited, the job keeps its 64 GPUs" \
    || fail "owner's update $change" "rc=$rc $out" "$(field TresPerJob "$job") $(last_audit)"
done
out=$(as_user scontrol update JobId="$job" Comment="trainfit: model=llama3-8b zero=3" TresPerJob=gres:gpu:h100:8 2>&1); rc=$?
rec=$(last_audit)
# Where job_modify is shown no partition the update is refused; a release that shows it the
# job's partition has it judged there (the audit line names it): either way not the top level's.
if [[ $(json "$rec" "['partition']") == "" ]]; then
  [[ $rc -ne 0 && $(json "$rec" "['reason']") == restate_required && $(colon "$(field TresPerJob "$job")") == gres:gpu:h100:64 ]] \
    && ok "owner's restated update without Partition=: refused (job_modify sees no partition)" || fail "restated update without partition" "rc=$rc $out" "$rec"
else
  [[ $(json "$rec" "['partition']") == "$(field Partition "$job")" ]] \
    && ok "owner's restated update without Partition=: judged in the job's partition, which this release shows job_modify" \
    || fail "restated update without partition" "rc=$rc $out" "$rec"
fi
out=$(as_user scontrol update JobId="$job" Comment="trainfit: model=llama3-8b zero=3" TresPerJob=gres:gpu:h100:8 Partition=gpu 2>&1); rc=$?
[[ $rc -eq 0 && $(colon "$(field TresPerJob "$job")") == gres:gpu:h100:8 ]] && ok "owner's update restating an annotation that fits: applied" \
  || fail "owner's restated update" "rc=$rc $out"
scancel "$job" 2>/dev/null
array=$(as_user sbatch -H --parsable --array=0-1 --gpus=h100:64 "${big[@]}" --wrap true 2>&1)
out=$(as_user scontrol update JobId="${array}_0" TresPerJob=gres:gpu:h100:8 2>&1); rc=$?
[[ $rc -ne 0 ]] && ok "owner's update of an array element: refused" || fail "array element update" "rc=$rc $out"
scancel "$array" 2>/dev/null

# ---- 3d. A GPU type named twice is counted once; the estimate's overheads are the site's ----
# slurmctld allocates one request per GPU type, the last count (measured: --gpus=h100:5,h100:3
# runs on 3 GPUs; tests/gres_test.cpp), so 11 twice is 11, fewer than the 70B job needs here.
if (( min64 > 11 )); then
  for shape in "--gpus=h100:11,h100:11" "--gres=gpu:h100:11,gpu:h100:11" "--gpus-per-node=h100:11,h100:11" \
               "--gpus-per-task=h100:1,h100:1 -n 11"; do
    # shellcheck disable=SC2086
    out=$(as_user sbatch -H --parsable $shape "${big[@]}" --wrap true 2>&1); rc=$?
    rec=$(last_audit)
    [[ $rc -ne 0 && $out == *"min_gpus_to_fit=$min64"* && $(json "$rec" "['gpus_requested']") == 11 ]] \
      && ok "sbatch $shape (70B needs $min64): judged on the 11 GPUs Slurm allocates, refused" \
      || fail "type named twice: $shape" "rc=$rc $out" "$rec"
    [[ $rc -eq 0 ]] && scancel "$(tail -1 <<<"$out")" 2>/dev/null
  done
  out=$(nospank as_user sbatch -H --parsable --gpus=h100:11,h100:11 --comment="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full" --wrap true 2>&1); rc=$?
  [[ $rc -ne 0 && $out == *"min_gpus_to_fit=$min64"* ]] && ok "the comment form, GPU type named twice: refused on 11" \
    || fail "type named twice, comment" "rc=$rc $out"
fi
# A zero count is ignored by slurmctld (src/common/gres.c, _get_next_job_gres: "Ignore GRES with
# explicit zero count"), so it cancels nothing: Slurm's own allocation first, then the gate's view.
for who in root "$user"; do
  run_as() { if [[ $who == root ]]; then "$@"; else as_user "$@"; fi; }
  out=$(run_as sbatch --parsable -p gpu --gpus=h100:5,H100:0 -o /dev/null --wrap "sleep 30" 2>&1); job=$(tail -1 <<<"$out")
  for _ in $(seq 100); do [[ $(field JobState "$job") == RUNNING ]] && break; sleep 0.2; done
  held=$(scontrol show job -d "$job" | grep -o 'JOB_GRES=gpu:h100:[0-9]*' | head -1)
  [[ ${held##*:} == 5 ]] && ok "$who: Slurm allocates --gpus=h100:5,H100:0 five GPUs ($held)" || fail "$who: zero entry allocation" "$out" "$held"
  scancel "$job" 2>/dev/null
  for shape in "--gpus=h100:5,h100:0" "--gpus=h100:5,H100:0" "--gres=gpu:h100:5,gpu:h100:0"; do
    # shellcheck disable=SC2086
    out=$(run_as sbatch -H --parsable -p strict $shape --wrap true 2>&1); rc=$?
    [[ $rc -ne 0 && $out == *"partition strict requires an LLM training annotation"* ]] \
      && ok "$who: -p strict $shape without annotation: refused (the zero entry hides no GPUs)" || fail "$who: zero entry strict $shape" "rc=$rc $out"
    [[ $rc -eq 0 ]] && scancel "$(tail -1 <<<"$out")" 2>/dev/null
  done
done
for form in "--llm-spec=runtime_overhead=false" "--llm-spec=runtime-overhead=0"; do
  out=$(as_user sbatch -H --parsable --gpus=h100:8 "${big[@]}" "$form" --wrap true 2>&1); rc=$?
  [[ $rc -ne 0 && $out == *"runtime_overhead=false: a setting of the estimate that is the site's"* ]] \
    && ok "sbatch $form: refused, the overheads are the site's setting" || fail "runtime_overhead $form" "rc=$rc $out"
done
out=$(nospank as_user sbatch -H --parsable --gpus=h100:8 --comment="trainfit: model=llama3-70b runtime_overhead=false" --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $(json "$(last_audit)" "['reason']") == invalid_annotation ]] \
  && ok "comment runtime_overhead=false: refused by slurmctld, audited invalid_annotation" || fail "runtime_overhead comment" "rc=$rc $out"

# ---- 3b. What this release's slurmctld hands the plugin (docs/slurm.md, "Slurm releases") ----
# Every client spelling arrives in slurmctld's own: "gres:gpu" up to 23.02, "gres/gpu" from
# 23.11 (per task with "="). Read from the audit line of an annotated job.
want_prefix=gres:gpu
(( $(cluster_release) >= 2311 )) && want_prefix=gres/gpu
for shape in "--gpus=h100:8" "--gpus=16" "--gres=gpu:h100:8" "--gpus-per-node=h100:8" "--gpus-per-task=1 -n 8"; do
  # shellcheck disable=SC2086  # the shape is several options
  out=$(nospank sbatch -H --parsable $shape --comment="trainfit: model=llama3-8b zero=3" --wrap true 2>&1); rc=$?
  seen=$(json "$(last_audit)" "['gpu_request']")
  [[ $rc -eq 0 && $seen == *"=$want_prefix"[:=]* ]] && ok "Slurm $(cluster_release): $shape reaches job_submit as $seen" \
    || fail "what job_submit sees for $shape" "rc=$rc $out" "$seen (expected $want_prefix)"
  scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
done

# ---- 4. One resolution on both sides; the job's GPU type ----
before=$(job_count)
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --llm-spec=zero_stage=0 --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"--llm-zero=3 and --llm-spec=zero_stage=0 disagree"* && $(job_count) -eq $before ]] \
  && ok "--llm-zero=3 with --llm-spec=zero_stage=0: refused in sbatch, naming both" || fail "contradiction" "rc=$rc" "$out"
min_a100=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu a100-40gb --gpus-per-node 64)
out=$(sbatch --gpus=a100-40gb:8 "${big[@]}" --llm-check --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"on 8 x A100"*"min_gpus_to_fit=$min_a100"* ]] && ok "--llm-check on --gpus=a100-40gb:8: checked as A100 40GB (min $min_a100)" \
  || fail "a100 check" "rc=$rc" "$out"
out=$(sbatch -H --parsable --gpus=h100:64 "${big[@]}" --llm-check --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"trainfit: fits: llama3-70b at seq 8192"*"on 64 x H100"*"min_gpus_to_fit=$min64"* ]] \
  && ok "--llm-check prints slurmctld's verdict on accept" || fail "--llm-check accept" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
out=$(sbatch --gres=gpu:a100-40gb:2,gpu:h100:2 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"on 4 x A100"* ]] && ok "mixed GPU types are checked against the smallest" || fail "mixed types" "rc=$rc" "$out"

# ---- 5. GPU names as clusters spell them ----
out=$(sbatch --gpus=h100_80g:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"on 8 x H100"* ]] && ok "site alias gpu_alias.h100_80g = h100" || fail "site alias" "rc=$rc" "$out"
out=$(sbatch --gpus=a100_40:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"gpu_alias.a100_40 = "* &&
   $(sed -n 2p <<<"$out") == "sbatch: error: Batch job submission failed: Invalid GRES specification (with and without type identification)" ]] \
  && ok "unknown GPU type: names the key to add, GRES-type error line" || fail "unknown type" "rc=$rc" "$out"

# ---- 1. A resize grants what it says (eight 8-GPU nodes, FUTURE, no slurmd; their
# GPUs named as AutoDetect=nvml names an H100 SXM) ----
cluster_stop "$dir"
CLUSTER_NODES_CONF="NodeName=n[1-8] NodeHostname=n[1-8] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:$nvml:8 State=FUTURE
PartitionName=elastic8 Nodes=n[1-8] Default=YES MaxTime=INFINITE State=UP" cluster_start "$dir" "$build/plugin" trainfit ||
  fail "start the 8-node cluster" "$(tail -3 "$dir/log/slurmctld.log")"
for layout in "--gpus=$nvml:8" "--gpus-per-node=$nvml:8 -N 1" "--gpus-per-task=$nvml:1 -n 8" "-n 8 --gpus=$nvml:8" \
              "--gpus-per-task=$nvml:3 -n 2 -N 1" "-n 1 --gpus=$nvml:8"; do
  # shellcheck disable=SC2086
  out=$(sbatch -H -p elastic8 --parsable $layout "${big[@]}" --llm-spec=gpus_per_node=11 --wrap true 2>&1); rc=$?
  job=$(tail -1 <<<"$out")
  read_grant "$job" "$out"
  if [[ $rc -eq 0 && -n $said && $said -ge $min8 && $granted -ge $said ]]; then
    ok "resize ($layout, annotation says 11 per node): says $said (CLI: $min8 on 8-GPU nodes), Slurm grants $granted"
  else fail "resize $layout" "rc=$rc said=$said granted=$granted nodes=$nodes tasks=$tasks" "$out" "$per_job $per_node $per_task"; fi
  why=$(resubmit_shape "$job" elastic8)
  [[ -z $why ]] && ok "8x8 resize ($layout): the resized shape, submitted again unheld, is one Slurm takes" || fail "8x8 shape $layout" "$why"
  if [[ $layout == *"-n 8"* ]]; then
    [[ $tasks -eq $said ]] && ok "resize ($layout) keeps one task per GPU: NumTasks=$tasks" || fail "task tie $layout" "tasks=$tasks said=$said"
  fi
  scontrol cancel "$job" 2>/dev/null
done

out=$(sbatch -H -p elastic8 --parsable --gpus=$nvml:8 --llm-model=llama3-8b --llm-zero=3 --llm-check --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"fits:"*"on 8 x H100"* ]] && ok "NVML type name $nvml is an H100" || fail "nvml name" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null

# ---- 1b. Sixteen 4-GPU nodes (FUTURE): accept, reject and resize in whole 4-GPU nodes ----
cluster_stop "$dir"
write_conf "partition.gpu4.gpus_per_node = 4
partition.elastic4.action = resize
partition.elastic4.gpus_per_node = 4"
CLUSTER_NODES_CONF="NodeName=q[1-16] NodeHostname=q[1-16] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:h100:4 State=FUTURE
PartitionName=gpu4 Nodes=q[1-16] Default=YES MaxTime=INFINITE State=UP
PartitionName=elastic4 Nodes=q[1-16] MaxTime=INFINITE State=UP" cluster_start "$dir" "$build/plugin" trainfit ||
  fail "start the 16-node cluster" "$(tail -3 "$dir/log/slurmctld.log")"
min4=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpus-per-node 4)
out=$(sbatch -H -p gpu4 --parsable --gpus=h100:4 --llm-model=llama3-8b --llm-zero=3 --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "4x16: llama3-8b on one 4-GPU node accepted" || fail "4x16 accept" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
out=$(sbatch -H -p gpu4 --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"min_gpus_to_fit=$min4"* ]] && ok "4x16: too few GPUs refused with min_gpus_to_fit=$min4 (CLI, 4 per node)" \
  || fail "4x16 reject" "rc=$rc" "$out"
for layout in "--gpus-per-node=h100:4 -N 2" "--gpus=h100:8" "--gpus-per-task=h100:1 -n 8" "-n 1 --gpus=h100:8" \
              "--gpus-per-task=h100:3 -n 2 -N 1"; do
  # shellcheck disable=SC2086
  out=$(sbatch -H -p elastic4 --parsable $layout "${big[@]}" --wrap true 2>&1); rc=$?
  job=$(tail -1 <<<"$out")
  read_grant "$job" "$out"
  if [[ $rc -eq 0 && -n $said && $said -ge $min4 && $granted -ge $said && $((nodes * 4)) -ge $granted ]]; then
    ok "4x16 resize ($layout): says $said (CLI: $min4), Slurm grants $granted on $nodes nodes"
  else fail "4x16 resize $layout" "rc=$rc said=$said granted=$granted nodes=$nodes tasks=$tasks" "$out"; fi
  why=$(resubmit_shape "$job" elastic4)
  [[ -z $why ]] && ok "4x16 resize ($layout): the resized shape, submitted again unheld, is one Slurm takes" || fail "4x16 shape $layout" "$why"
  scontrol cancel "$job" 2>/dev/null
done

# ---- 1c. Six 8-GPU nodes (FUTURE) under a maximum that is not a whole number of nodes:
# resize_max_gpus = 36 allows four nodes (32 GPUs); no resized job holds more ----
cluster_stop "$dir"
write_conf "partition.elastic6.action = resize
partition.elastic6.gpus_per_node = 8
partition.elastic6.resize_max_gpus = 36"
CLUSTER_NODES_CONF="NodeName=s[1-6] NodeHostname=s[1-6] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=FUTURE
PartitionName=elastic6 Nodes=s[1-6] Default=YES MaxTime=INFINITE State=UP" cluster_start "$dir" "$build/plugin" trainfit ||
  fail "start the 6-node cluster" "$(tail -3 "$dir/log/slurmctld.log")"
longer=(--llm-model=llama3-70b --llm-seq=16384 --llm-zero=3 --llm-recompute=full)
min_longer=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 16384 --zero 3 --recompute full --gpu h100 --gpus-per-node 8)
for model in big longer; do
  declare -n annotation=$model
  [[ $model == big ]] && least=$min8 || least=$min_longer
  for layout in "--gpus=h100:8" "--gpus-per-node=h100:8 -N 1" "--gpus-per-task=h100:1 -n 8" "-n 1 --gpus=h100:8" \
                "--gpus-per-task=h100:3 -n 2 -N 1" "--gpus-per-task=h100:2 -n 2 --ntasks-per-node=2"; do
    # shellcheck disable=SC2086
    out=$(sbatch -H -p elastic6 --parsable $layout "${annotation[@]}" --wrap true 2>&1); rc=$?
    needs=$(grep -o 'it needs [0-9]* nodes, more than partition elastic6 allows a job (6)' <<<"$out" | awk '{print $3}')
    if [[ $rc -eq 1 && -n $needs && $needs -gt 6 ]]; then  # 2 tasks of 2 GPUs per node: 32 GPUs need 8 nodes
      ok "6x8 under 36 ($model, $layout): refused, its whole tasks need $needs nodes of the partition's 6"
      continue
    fi
    job=$(tail -1 <<<"$out")
    read_grant "$job" "$out"
    if [[ $rc -eq 0 && -n $said && $said -ge $least && $granted -ge $said && $granted -le 36 && $nodes -le 6 ]]; then
      ok "6x8 under 36 ($model, $layout): says $said (CLI: $least), Slurm grants $granted on $nodes nodes"
    else fail "6x8 resize $model $layout" "rc=$rc said=$said granted=$granted nodes=$nodes tasks=$tasks" "$out"; fi
    why=$(resubmit_shape "$job" elastic6)
    [[ -z $why ]] && ok "6x8 resize ($model, $layout): the resized shape, submitted again unheld, is one Slurm takes" \
      || fail "6x8 shape $model $layout" "$why"
    scontrol cancel "$job" 2>/dev/null
  done
  unset -n annotation
done
before=$(job_count)
# 70B at seq 16384: a count exists (the CLI's, for the likely high end), beyond 36.
over36=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 16384 --zero 3 --recompute full --gpu h100 --gpus-per-node 8 2>/dev/null)
out=$(sbatch -H -p elastic6 --gpus=h100:8 --llm-model=llama3-70b --llm-seq=16384 --llm-zero=3 --llm-recompute=full --wrap true 2>&1); rc=$?
[[ $over36 =~ ^[0-9]+$ && $over36 -gt 36 && $rc -eq 1 && $(job_count) -eq $before && $out == *"resize limit of 36 GPUs"* ]] \
  && ok "6x8: a job that needs more than resize_max_gpus = 36 is refused, naming the maximum" || fail "6x8 over the maximum" "rc=$rc" "$out"
cluster_stop "$dir"
write_conf
cluster_start "$dir" "$build/plugin" trainfit || fail "restart the one-node cluster"

# ---- 12. What users see, class by class ----
out=$(nospank sbatch --gpus=h100:8 --comment="trainfit: model=llama3-8b seq=abc" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $(sed -n 1p <<<"$out") == "sbatch: error: trainfit: invalid annotation: seq='abc' is not valid; accepted: integer >= 1" &&
   $(sed -n 2p <<<"$out") == "sbatch: error: Batch job submission failed: Unspecified error" ]] \
  && ok "comment typo: comment syntax (seq='abc'), not a GRES error" || fail "comment typo" "rc=$rc" "$out"
out=$(sbatch --gpus=16777216 --llm-model=llama3-8b --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"trainfit: GPU request"*"at most 1048576"* && $out != *"invalid annotation"* ]] \
  && ok "--gpus=16777216: a GPU-request problem" || fail "huge --gpus" "rc=$rc" "$out"
out=$(sbatch --gpus-per-socket=16777216 --sockets-per-node=65000 -N 2147483647 --llm-model=llama3-8b --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out != *"requests no GPUs"* ]] && ok "GPU totals do not overflow (--gpus-per-socket x sockets x nodes)" || fail "overflow" "rc=$rc" "$out"

# ---- 13. Submit side: files and srun steps ----
mkfifo "$dir/fifo.json"
out=$(timeout 20 sbatch --gpus=h100:8 --llm-hf-config="$dir/fifo.json" --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $rc -ne 124 && $out == *"a FIFO, not a regular file"* ]] && ok "--llm-hf-config=FIFO fails at once" || fail "hf FIFO" "rc=$rc" "$out"
out=$(timeout 20 sbatch --gpus=h100:8 --llm-hf-config=/dev/zero --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $rc -ne 124 && $out == *"a character device"* ]] && ok "--llm-hf-config=/dev/zero refused without reading" || fail "hf /dev/zero" "rc=$rc" "$out"
out=$(sbatch --gpus=h100:8 --llm-hf-config="$here/../fixtures/hf/llama-3-70b.config.json" --llm-seq=8192 \
        --llm-zero=3 --llm-recompute=full --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"at seq 8192 needs"*"min_gpus_to_fit=$min64"* ]] && ok "--llm-hf-config geometry reaches job_submit" \
  || fail "--llm-hf-config" "rc=$rc" "$out"
# --llm-framework-version: the transformers release decides the dtype a LoRA base loads in
# (4.x: fp32, 5: the checkpoint's bf16); each verdict equals the CLI's, and they differ.
declare -A min_release
for release in 4.45 5.2; do
  min_release[$release]=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 4096 --framework hf --framework-version "$release" \
    --adapter lora --recompute full --zero 3 --gpu h100 --gpus-per-node 64 2>/dev/null)
  out=$(sbatch --gpus=h100:1 --llm-model=llama3-70b --llm-seq=4096 --llm-framework=hf --llm-framework-version="$release" \
        --llm-spec=adapter=lora --llm-zero=3 --llm-recompute=full --wrap true 2>&1); rc=$?
  [[ $rc -eq 1 && $out == *"min_gpus_to_fit=${min_release[$release]}"* ]] \
    && ok "--llm-framework-version=$release reaches job_submit: min_gpus_to_fit=${min_release[$release]} as the CLI" \
    || fail "--llm-framework-version=$release" "rc=$rc" "$out"
done
[[ ${min_release[4.45]} != "${min_release[5.2]}" ]] && ok "transformers 4.45 and 5.2 differ (fp32 vs bf16 LoRA base)" \
  || fail "framework releases give the same answer" "${min_release[*]}"
# --llm-config: a DeepSpeed file read in sbatch, its fields (framework included) carried to
# job_submit as TRAINFIT_CONFIG; the verdict must equal the CLI's on the same file. Both
# offloads leave no model state on the GPU (DeepSpeed ZeRO-3: the gradient partitions follow
# the optimizer to the CPU), so at 4096 tokens the job fits on one GPU: 8192 does not fit.
ds_config="$here/../fixtures/frameworks/deepspeed_zero3_offload.json"
min_cfg=$("$trainfit" min-gpus --fit-bound likely_high --config "$ds_config" --model llama3-70b --seq 8192 --gpu h100 --gpus-per-node 64 2>/dev/null)
out=$(sbatch --gpus=h100:4 --llm-config="$ds_config" --llm-model=llama3-70b --llm-seq=8192 --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"(deepspeed): ignored (no effect on memory)"* && $out == *"min_gpus_to_fit=$min_cfg"* ]] \
  && ok "--llm-config (DeepSpeed) reaches job_submit: min_gpus_to_fit=$min_cfg as the CLI" || fail "--llm-config" "rc=$rc" "$out"
# A torchtune YAML: read by trainfit_config_reader.so (yaml-cpp), loaded only now.
tt_config="$here/../fixtures/frameworks/torchtune_llama3_1_8B_full.yaml"
out=$(sbatch -H --parsable --gpus=h100:8 --llm-config="$tt_config" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"--llm-config (torchtune): "* ]] \
  && ok "--llm-config (torchtune YAML) read in sbatch by the config reader module" || fail "--llm-config YAML" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
out=$(timeout 20 sbatch --gpus=h100:8 --llm-config="$dir/fifo.json" --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $rc -ne 124 && $out == *"a FIFO, not a regular file"* ]] && ok "--llm-config=FIFO fails at once" || fail "config FIFO" "rc=$rc" "$out"

salloc_step() { timeout 120 salloc -n 4 --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 srun "$@" 2>&1; }
out=$(salloc_step --llm-model=llama3-8b --llm-zero=3 echo step-ran); rc=$?
[[ $rc -eq 0 && $out == *step-ran* ]] && ok "srun step that fits runs" || fail "srun fits" "rc=$rc" "$out"
out=$(salloc_step "${big[@]}" echo step-ran); rc=$?
[[ $rc -ne 0 && $out != *step-ran* && $out == *"min_gpus_to_fit=$min64"*"step refused"* ]] && ok "srun step predicted to OOM refused" \
  || fail "srun refused" "rc=$rc" "$out"
for spelling in "--gpus=h100:1" "--gpus 1" "-G 1" "-G1" "--mpi none -G 1" "-w localhost --gpus 1" "-l --gpus 1 --label"; do
  # shellcheck disable=SC2086
  out=$(salloc_step $spelling --llm-model=llama3-8b --llm-zero=3 echo step-ran); rc=$?
  [[ $rc -ne 0 && $out != *step-ran* && $out == *"on 1 x H100"*"step refused"* ]] && ok "srun $spelling: checked on its own 1 GPU" \
    || fail "srun $spelling" "rc=$rc" "$out" "$(tail -5 "$dir/log/slurmctld.log")"
done
out=$(timeout 60 salloc --gpus=h100:8 "${big[@]}" true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"min_gpus_to_fit=$min64"* ]] && ok "salloc allocation rejected" || fail "salloc" "rc=$rc" "$out"
# A step is judged on its own --llm-* options, not those the allocation exported; a file named
# at submission is not read again by the steps (deleted here before they run).
cp "$here/../fixtures/hf/llama-3-8b.config.json" "$dir/own.json" && chmod a+r "$dir/own.json"
out=$(cd "$dir" && as_user timeout 120 salloc -n 4 --gpus=h100:8 --llm-hf-config="$dir/own.json" --llm-zero=3 \
        bash -c "rm -f $dir/own.json; srun -n1 --gpus=h100:1 echo one-gpu-step; srun --gres=none echo no-gpu-step" 2>&1); rc=$?
[[ $rc -eq 0 && $out == *one-gpu-step* && $out == *no-gpu-step* && $out != *"step refused"* ]] \
  && ok "inside salloc --llm-*: srun steps without their own options run (file deleted after submitting)" \
  || fail "steps inherit the allocation's annotation" "rc=$rc" "$out"

# ---- 13b. sbatch and salloc inside an annotated job: judged on their own options ----
# (issue 34, point 7) sbatch/salloc export their --llm-* options to the job's environment
# (SLURM_SPANK__SLURM_SPANK_OPTION_trainfit_*) and Slurm reads them back in any sbatch or
# salloc run there. The parent (an salloc, then a batch job) is annotated with a relative
# --llm-hf-config; each child submission inside it must get exactly the verdict the same
# command gets from a clean shell, run as the same user from the same directories.
inh=$dir/inherit
mkdir -p "$inh/elsewhere"
cp "$here/../fixtures/hf/llama-3-70b.config.json" "$inh/parent.json"
parent=(--llm-hf-config=parent.json --llm-seq=8192 --llm-zero=3 --llm-recompute=full)
parent_gpus=$("$trainfit" min-gpus --fit-bound likely_high --hf-config "$inh/parent.json" --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 64)
printf '#!/bin/bash\n#SBATCH --llm-model=llama3-70b\n#SBATCH --gpus=h100:32\ntrue\n' > "$inh/child32.sh"
cat > "$inh/children.sh" <<CHILDREN
#!/bin/bash
# children.sh OUT: each child submission's output and exit code in OUT/NAME.{out,rc}
out=\$1
mkdir -p "\$out"
run() { local name=\$1; shift; "\$@" >"\$out/\$name.out" 2>&1; echo \$? >"\$out/\$name.rc"; }
run plain sbatch -H --parsable --gpus=h100:1 --wrap true
run model32 sbatch -H --parsable --llm-model=llama3-70b --gpus=h100:32 --wrap true
run script32 sbatch -H --parsable "$inh/child32.sh"
run salloc timeout 60 salloc -n1 --gpus=h100:1 true
cd "$inh/elsewhere" && run elsewhere sbatch -H --parsable --gpus=h100:1 --wrap true
CHILDREN
printf '#!/bin/bash\nbash %s "$1"\n' "$inh/children.sh" > "$inh/parent-job.sh"
chmod -R a+rwX "$inh"
children=(plain model32 script32 salloc elsewhere)
# same_verdicts WHO WHERE: each child's exit code, and a refusal's text, as from the clean shell.
same_verdicts() {
  local who=$1 where=$2 name differ=""
  for name in "${children[@]}"; do
    local got=$inh/$who-$where/$name want=$inh/$who-clean/$name
    if [[ ! -f $got.rc || $(cat "$got.rc") != "$(cat "$want.rc")" ]]; then differ+=" $name"; continue; fi
    [[ $(cat "$want.rc") == 0 ]] || cmp -s "$got.out" "$want.out" || differ+=" $name"
  done
  for name in plain model32 script32 elsewhere; do  # the held jobs
    [[ $(cat "$inh/$who-$where/$name.rc" 2>/dev/null) == 0 ]] && scontrol cancel "$(tail -1 "$inh/$who-$where/$name.out")" 2>/dev/null
  done
  if [[ -z $differ ]]; then ok "$who, inside an annotated $where: sbatch and salloc get the clean shell's verdicts (${children[*]})"
  else
    local lines=()
    for name in $differ; do
      lines+=("$name: rc $(cat "$inh/$who-$where/$name.rc" 2>/dev/null) vs clean $(cat "$inh/$who-clean/$name.rc"):" \
              "$(head -c 400 "$inh/$who-$where/$name.out" 2>/dev/null)" "clean: $(head -c 400 "$inh/$who-clean/$name.out")")
    done
    fail "$who, inside an annotated $where: verdicts differ from the clean shell:$differ" "${lines[@]}"
  fi
}
for who in root "$user"; do
  (cd "$inh" && as_who "$who" bash "$inh/children.sh" "$inh/$who-clean")
  for name in plain model32 script32 elsewhere; do
    [[ $(cat "$inh/$who-clean/$name.rc") == 0 ]] && scontrol cancel "$(tail -1 "$inh/$who-clean/$name.out")" 2>/dev/null
  done
  # The clean shell's verdicts as the requests imply them: unannotated, accepted; llama3-70b at
  # its defaults on 32 H100s, refused (the CLI's minimum is higher), in both spellings.
  clean=$(for name in "${children[@]}"; do printf '%s=%s ' "$name" "$(cat "$inh/$who-clean/$name.rc")"; done)
  [[ $clean == "plain=0 model32=1 script32=1 salloc=0 elsewhere=0 " ]] \
    && ok "$who, clean shell: unannotated children accepted, llama3-70b on 32 GPUs refused" || fail "$who clean children" "$clean"
  out=$(cd "$inh" && as_who "$who" timeout 180 salloc -n 4 --gpus=h100:"$parent_gpus" "${parent[@]}" \
          bash "$inh/children.sh" "$inh/$who-salloc" 2>&1); rc=$?
  [[ $rc -eq 0 ]] || fail "$who: the annotated parent salloc on $parent_gpus GPUs" "rc=$rc" "$out"
  same_verdicts "$who" salloc
  job=$(cd "$inh" && as_who "$who" sbatch --parsable -n 4 --gpus=h100:"$parent_gpus" "${parent[@]}" -o "$inh/$who-job.log" \
          "$inh/parent-job.sh" "$inh/$who-job" 2>&1)
  for _ in $(seq 600); do [[ $(field JobState "$job") == @(COMPLETED|FAILED|CANCELLED|TIMEOUT) ]] && break; sleep 0.2; done
  [[ $(field JobState "$job") == COMPLETED ]] \
    || fail "$who: the annotated parent batch job" "$job: $(field JobState "$job")" "$(cat "$inh/$who-job.log" 2>/dev/null)"
  same_verdicts "$who" job
done

# ---- 10. Audit records and the verdict on the job, as an ordinary user ----
out=$(as_user sbatch -H --parsable -J llm-train --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true 2>&1); rc=$?
job=$(tail -1 <<<"$out")
stamp=$(field AdminComment "$job")
id_on_job=$(grep -o 'decision [^ ;]*' <<<"$(scontrol show job "$job" | grep AdminComment)" | awk '{print $2}')
settle; rec=$(grep "\"decision_id\":\"$id_on_job\"" "$dir/audit.jsonl")
if [[ $rc -eq 0 && $stamp == trainfit* && -n $id_on_job && $(json "$rec" "['user']") == "$user" &&
      $(json "$rec" "['job_name']") == llm-train && $(colon "$(json "$rec" "['gpu_request']")") == *"gres:gpu:h100:8"* ]]; then
  ok "an ordinary user's job carries the verdict in AdminComment; its decision id finds the audit line"
else fail "AdminComment stamp" "rc=$rc stamp=$stamp id=$id_on_job" "$rec"; fi
out=$(as_user scontrol update job="$job" AdminComment=forged 2>&1); rc=$?
[[ $rc -ne 0 && $(field AdminComment "$job") == trainfit* ]] && ok "users cannot overwrite the stamp" || fail "stamp forge" "rc=$rc $out"
scontrol cancel "$job" 2>/dev/null

# ---- 11. User text in slurmctld's log is escaped ----
job=$(nospank sbatch -H --parsable --gpus=h100:8 --wrap true 2>&1)
scontrol update job="$job" Comment=$'trainfit: model=llama3-8b\x1b[31m zero=3' TresPerJob=gres:gpu:h100:8 >/dev/null 2>&1
scontrol update job="$job" TresPerJob=gres:gpu:h100:2 >/dev/null 2>&1
if grep -q $'\x1b' "$dir/log/slurmctld.log"; then fail "escape sequences reached slurmctld's log"
else ok "no raw escape sequence in slurmctld's log"; fi
scontrol cancel "$job" 2>/dev/null

# ---- 8. Exemptions (picked up by the reload of 7) ----
write_conf "exempt_users = $user
exempt_accounts = ops"
await_reload
out=$(as_user sbatch -H --parsable --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $(json "$(last_audit)" "['action']") == exempt ]] && ok "exempt user: admitted, audited as exempt" || fail "exempt user" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
out=$(sbatch -H --parsable -A ops --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "exempt account: admitted" || fail "exempt account" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
grep -q "reloaded; policy in force from $dir/trainfit.conf" "$dir/log/slurmctld.log" && ok "a changed trainfit.conf is reloaded without a restart (logged)" \
  || fail "reload log" "$(grep trainfit "$dir/log/slurmctld.log" | tail -3)"

# ---- 7. Reload: a new policy applies; an invalid file keeps the old one ----
write_conf "partition.gpu.action = warn"
await_reload
out=$(sbatch -H --parsable -p gpu --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"min_gpus_to_fit=$min64"* ]] && ok "reload: partition gpu now warns (no restart)" || fail "reload warn" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
conf_seen=$(conf_events)
printf 'action = deny\n' > "$dir/trainfit.conf"
await_reload
out=$(sbatch -H --parsable -p gpu --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && grep -q "changed but is not valid (trainfit.conf line 1: action='deny'.*); the policy in force stays" "$dir/log/slurmctld.log" \
  && ok "reload of an invalid file keeps the policy in force, and says so" || fail "invalid reload" "rc=$rc $out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
conf_seen=$(conf_events)
printf '# emptied by a full disk or a bad deploy\n\n' > "$dir/trainfit.conf"
await_reload
out=$(nospank as_user sbatch -H -p strict --gpus=h100:8 --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"requires an LLM training annotation"* ]] && grep -q "trainfit.conf is now empty (no key = value line" "$dir/log/slurmctld.log" \
  && ok "an emptied trainfit.conf keeps the policy in force (strict still refuses), and says so" || fail "empty reload" "rc=$rc $out"

# ---- 8. The likely range decides (docs/slurm.md, "Deciding on the likely range") ----
# From the CLI's answers for the 70B job at each GPU count (79.6 GiB usable): the largest count
# whose range's low end is past the capacity, a count whose range holds it (one whose point figure
# is past it too, for refuse_when = likely), and the fewest whose high end fits. The built-in
# default refuse_when (certain): the file does not name it.
refuse_line= write_conf
await_reload
read -r n_below n_band n_over n_above <<<"$(/usr/bin/python3 - "$trainfit" <<'PY'
import json, subprocess, sys
below = band = over = above = 0
for n in range(1, 65):
    out = subprocess.run([sys.argv[1], "estimate", "--model", "llama3-70b", "--seq", "8192", "--zero", "3",
                          "--recompute", "full", "--gpu", "h100", "--gpus", str(n), "--gpus-per-node", "64",
                          "--format", "json"], capture_output=True, text=True).stdout  # exit 1: it does not fit
    r = json.loads(out)
    cap, low, point, high = r["gpu_capacity_gb"], r["likely_low_gb"], r["per_gpu_total_gb"], r["likely_high_gb"]
    if low > cap: below = n
    elif high > cap:
        band = band or n
        if point > cap: over = n
    elif not above: above = n
print(below, band, over, above)
PY
)"
comment="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full"
if (( n_below > 0 && n_band > 0 && n_above > 0 )); then
  out=$(nospank sbatch -H --parsable --gpus=h100:$n_below --comment="$comment" --wrap true 2>&1); rc=$?
  [[ $rc -ne 0 && $out == *"past the usable HBM even at its likely low end"* && $out == *"for the likely high end"* ]] \
    && ok "$n_below GPUs, the range's low end past the capacity: refused (refuse_when = certain)" || fail "range: below" "rc=$rc $out"
  out=$(nospank sbatch -H --parsable --gpus=h100:$n_band --comment="$comment" --wrap true 2>&1); rc=$?
  rec=$(last_audit)
  [[ $rc -eq 0 && $out == *"warning: may not fit: llama3-70b at seq 8192 needs"*"(likely "* \
     && $(json "$rec" "['reason']") == uncertain_fit && $(json "$rec" "['action']") == warn \
     && $(json "$rec" "['min_gpus_bound']") == likely_high && $(json "$rec" "['likely_high_gb']") != 0 ]] \
    && ok "$n_band GPUs, the range holding the capacity: accepted with the range, audited as uncertain_fit" \
    || fail "range: between" "rc=$rc $out" "$rec"
  scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
  out=$(nospank sbatch -H --parsable --gpus=h100:$n_above --comment="$comment" --wrap true 2>&1); rc=$?
  [[ $rc -eq 0 && $(wc -l <<<"$out") -eq 1 ]] && ok "$n_above GPUs, the range's high end fits: accepted in silence" \
    || fail "range: above" "rc=$rc $out"
  scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
  if (( n_over > 0 )); then
    write_conf "refuse_when = likely"
    await_reload
    out=$(nospank sbatch -H --parsable --gpus=h100:$n_over --comment="$comment" --wrap true 2>&1); rc=$?
    [[ $rc -ne 0 && $out == *"min_gpus_to_fit="* ]] && ok "refuse_when = likely: $n_over GPUs (point figure past the capacity) refused" \
      || fail "range: likely" "rc=$rc $out"
  else
    fail "range: no count has its point figure past the capacity and its low end below it" "$n_below $n_band $n_over $n_above"
  fi
else
  fail "range: the 70B job has no counts below, in and above its range" "$n_below $n_band $n_over $n_above"
fi

# ---- 9. The audit log on a full filesystem: whole lines or none ----
write_conf
await_reload
if mountpoint -q "$dir/small"; then
  audit=$dir/small/audit.jsonl write_conf
  await_reload
  sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1  # first line
  dd if=/dev/zero of="$dir/small/filler" bs=4096 2>/dev/null   # until ENOSPC
  rcs=""
  for _ in $(seq 12); do sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1; rcs+="$?"; done
  dropped=$(grep -c "records are dropped, never half-written" "$dir/log/slurmctld.log")
  rm -f "$dir/small/filler"
  sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1
  parsed=$(/usr/bin/python3 -c "
import json,sys
n=0
for l in open(sys.argv[1]): json.loads(l); n+=1
print(n)" "$dir/small/audit.jsonl" 2>&1)
  if [[ $rcs == 000000000000 && $dropped -ge 1 && $parsed =~ ^[0-9]+$ && $(tail -c1 "$dir/small/audit.jsonl" | od -An -c | tr -d ' ') == '\n' ]] &&
     grep -q "writable again" "$dir/log/slurmctld.log"; then
    ok "full disk: jobs admitted, records dropped whole, $parsed lines all parse, writing resumes"
  else fail "full disk" "rcs=$rcs dropped=$dropped parsed=$parsed"; fi
  audit= write_conf
  await_reload
  sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1  # moves the log back
  umount "$dir/small"
else
  echo "skip full-disk audit test: cannot mount a tmpfs here"
fi
scancel -u root -t PD 2>/dev/null

# ---- 9b. The audit log in a folder others can write: a user's symlink is never followed ----
mkdir -p "$dir/pub" && chmod 1777 "$dir/pub"
echo "root's own" > "$dir/root-owned" && chmod 600 "$dir/root-owned"
as_user ln -s "$dir/root-owned" "$dir/pub/audit.jsonl"
audit=$dir/pub/audit.jsonl write_conf
await_reload
as_user sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1
settle
[[ $(cat "$dir/root-owned") == "root's own" ]] && grep -q "pub/audit.jsonl is a symbolic link; refused" "$dir/log/slurmctld.log" \
  && ok "a user's symlink at the audit log's name: not followed, refused in slurmctld's log" \
  || fail "audit symlink" "$(cat "$dir/root-owned")" "$(grep audit "$dir/log/slurmctld.log" | tail -2)"
rm -f "$dir/pub/audit.jsonl"
as_user touch "$dir/pub/audit.jsonl"
as_user sbatch -H --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true >/dev/null 2>&1
settle
[[ ! -s $dir/pub/audit.jsonl ]] && grep -q "folder $dir/pub is writable by others" "$dir/log/slurmctld.log" \
  && ok "a log file a user planted in a world-writable folder: refused, nothing written" || fail "planted audit file" "$(tail -2 "$dir/log/slurmctld.log")"
audit= write_conf
await_reload
scancel -u "$user" 2>/dev/null

# ---- The audit log: one valid JSON line per decision; slurmctld healthy ----
valid=$(/usr/bin/python3 -c "import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)['action']))" "$dir/audit.jsonl")
[[ $valid -eq $(audit_lines) && $valid -gt 20 ]] && ok "audit log: $valid lines, each valid JSON" || fail "audit log" "valid=$valid lines=$(audit_lines)"
if scontrol ping | grep -q UP && ! grep -q "job_submit/trainfit: internal" "$dir/log/slurmctld.log"; then ok "slurmctld healthy"
else fail "slurmctld health" "$(tail -5 "$dir/log/slurmctld.log")"; fi

# ---- plugstack.conf arguments ----
echo "required $build/plugin/spank_trainfit.so default_gpu=h100 colour=red" > "$dir/bad-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/bad-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-badspank.conf"
out=$(SLURM_CONF=$dir/slurm-badspank.conf sbatch --gpus=h100:8 --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"unknown argument 'colour=red'"* ]] && ok "plugstack.conf: unknown argument refused" || fail "plugstack arguments" "rc=$rc" "$out"

# ---- endpoint=: sbatch's checks asked of `trainfit serve` (its access log shows the POST) ----
timeout -k 5 300 "$trainfit" serve --listen 127.0.0.1:0 --node-name svc --access-log "$dir/svc-access.log" 2>"$dir/svc.err" &
svc_pid=$!
for _ in $(seq 100); do
  svc_port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$dir/svc.err"); [[ -n $svc_port ]] && break; sleep 0.1
done
svc=http://127.0.0.1:$svc_port
closed=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
with_spank() {  # with_spank NAME WORDS...: slurm-NAME.conf, whose plugstack line ends with WORDS
  local name=$1; shift
  echo "required $build/plugin/spank_trainfit.so default_gpu=h100 conf=$dir/trainfit.conf $*" > "$dir/$name-plugstack.conf"
  sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/$name-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-$name.conf"
}
svc_posts() { local n; n=$(grep -c '"method":"POST"' "$dir/svc-access.log" 2>/dev/null); echo "${n:-0}"; }
with_spank ep "endpoint=$svc"
before=$(svc_posts)
out=$(SLURM_CONF=$dir/slurm-ep.conf sbatch -H --parsable --gpus=h100:64 "${big[@]}" --llm-check --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"trainfit: checked by $svc/edge/training"* && $(svc_posts) -eq $((before + 1)) ]] \
  && ok "endpoint=: --llm-check asks the service (a POST in its access log)" || fail "endpoint check" "rc=$rc posts $before -> $(svc_posts)" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
want=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-tp=3 --wrap true 2>&1 | head -1)
out=$(SLURM_CONF=$dir/slurm-ep.conf sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-tp=3 --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $(head -1 <<<"$out") == "$want" && $want == *"invalid annotation"* ]] && grep -q '"status":400' "$dir/svc-access.log" \
  && ok "endpoint=: an invalid annotation is the service's 400, the same line as without it" || fail "endpoint 400" "want: $want" "$out"
with_spank down "endpoint=http://127.0.0.1:$closed"
out=$(SLURM_CONF=$dir/slurm-down.conf sbatch -H --parsable --gpus=h100:64 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 && $out == *"trainfit: no endpoint answered: http://127.0.0.1:$closed/edge/training (connection failed"*"; computed locally"* ]] \
  && ok "endpoint= down: checked locally, saying so" || fail "endpoint down" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
with_spank refuse "endpoint=http://127.0.0.1:$closed endpoint_fallback=refuse endpoint_connect_timeout_ms=200 endpoint_timeout_ms=400"
jobs_before=$(job_count)
out=$(SLURM_CONF=$dir/slurm-refuse.conf sbatch -H --gpus=h100:64 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"no endpoint answered: http://127.0.0.1:$closed/edge/training"*"refused (endpoint_fallback=refuse)"* && $(job_count) -eq $jobs_before ]] \
  && ok "endpoint= down, endpoint_fallback=refuse: sbatch refuses, nothing queued" || fail "endpoint refuse" "rc=$rc" "$out"
with_spank badep "endpoint=ftp://x"
out=$(SLURM_CONF=$dir/slurm-badep.conf sbatch --gpus=h100:8 --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"plugstack.conf: endpoint='ftp://x' is not valid; accepted: one or more http:// or https:// URLs"* ]] \
  && ok "plugstack.conf: a bad endpoint refused, naming it" || fail "bad endpoint" "rc=$rc" "$out"
# An endpoint whose 400 carries a 200 KiB error message with a line break in it: the user sees
# one line, cut at 1024 bytes, with the message's size (the one sent); no forged second line.
/usr/bin/python3 "$here/../endpoint_long_error.py" 204800 > "$dir/long-error.port" &
long_error_pid=$!
for _ in $(seq 50); do [[ -s $dir/long-error.port ]] && break; sleep 0.1; done
with_spank long "endpoint=http://127.0.0.1:$(cat "$dir/long-error.port")"
for who in root "$user"; do
  out=$(as_who "$who" env SLURM_CONF="$dir/slurm-long.conf" sbatch --gpus=h100:8 --llm-model=llama3-8b --wrap true 2>&1); rc=$?
  line=$(grep "invalid annotation" <<<"$out")
  [[ $rc -ne 0 && $(grep -c "invalid annotation" <<<"$out") -eq 1 && ${#line} -lt 1200 && $line == *"eeee... [cut: 204800 bytes]" && \
     ${#out} -lt 2000 && $out != *"forged line"* ]] \
    && ok "$who, endpoint=: a 200 KiB error from the endpoint is one line of ${#line} bytes, cut, saying its size" \
    || fail "$who endpoint long error" "rc=$rc, ${#out} bytes" "$(head -c 600 <<<"$out")"
done
kill "$long_error_pid" 2>/dev/null

# ---- 15b. A broken site catalog file fails only the submissions with --llm-* options ----
# (issue 34, point 10) The plugin is `required`: an init that failed on the catalogs would fail
# every sbatch and salloc of the cluster. plugstack.conf's default_gpu= names a GPU of the site
# catalog, which a broken file beside it keeps from being installed.
badcat=$dir/badcat
mkdir -p "$badcat/gpus.d"
echo '{"gpus": [{"name": "l40-site", "capacity_bytes": 48305799168}]}' > "$badcat/gpus.d/10-site.json"
echo '{"gpus": [{"name": "broken-gpu", "capacity_bytes": "lots"}]}' > "$badcat/gpus.d/20-broken.json"
chmod -R a+rX "$badcat"
with_spank badcat "default_gpu=l40-site"
with_badcat() { local who=$1; shift; as_who "$who" env SLURM_CONF="$dir/slurm-badcat.conf" TRAINFIT_CATALOG_DIR="$badcat" "$@"; }
for who in root "$user"; do
  out=$(with_badcat "$who" sbatch -H --parsable --gpus=h100:1 --wrap true 2>&1); rc=$?
  [[ $rc -eq 0 && $out =~ ^[0-9]+$ ]] && ok "$who, broken catalog file: a plain sbatch is queued, nothing said" \
    || fail "$who broken catalog: plain sbatch" "rc=$rc" "$out"
  [[ $rc -eq 0 ]] && scontrol cancel "$out" 2>/dev/null
  out=$(with_badcat "$who" timeout 60 salloc -n1 --gpus=h100:1 srun echo step-ran 2>&1); rc=$?
  [[ $rc -eq 0 && $out == *step-ran* && $out != *catalog* ]] \
    && ok "$who, broken catalog file: a plain salloc and its srun step run" || fail "$who broken catalog: plain salloc" "rc=$rc" "$out"
  for command in sbatch salloc; do
    llm=(--gpus=h100:8 --llm-model=llama3-8b --llm-zero=3)
    if [[ $command == sbatch ]]; then out=$(with_badcat "$who" sbatch -H "${llm[@]}" --wrap true 2>&1); rc=$?
    else out=$(with_badcat "$who" timeout 60 salloc "${llm[@]}" true 2>&1); rc=$?; fi
    [[ $rc -ne 0 && $(grep -c "catalog" <<<"$out") -eq 1 && \
       $out == *"trainfit: site catalog $badcat/gpus.d/20-broken.json:1: "*"capacity_bytes"*"--llm-* options cannot be checked"* ]] \
      && ok "$who, broken catalog file: $command with --llm-* options refused with the file's error on one line" \
      || fail "$who broken catalog: $command --llm" "rc=$rc" "$out"
  done
  out=$(with_badcat "$who" timeout 60 salloc -n1 --gpus=h100:1 srun --llm-model=llama3-8b echo step-ran 2>&1); rc=$?
  [[ $rc -ne 0 && $out != *step-ran* && $(grep -c "catalog" <<<"$out") -eq 1 && $out == *"20-broken.json:1: "*"step refused"* ]] \
    && ok "$who, broken catalog file: an srun step with --llm-* options refused with the file's error" \
    || fail "$who broken catalog: srun --llm" "rc=$rc" "$out"
done
# srun steps: the numbers from the service, the partition's policy (headroom) applied by
# the plugin: the same verdict line as computed in-process. The allocation uses the plain
# plugstack; only the step's srun reads the endpoint= one.
step_with() {  # step_with CONF SRUN_ARGS...
  local conf=$1; shift
  timeout 120 salloc -n 4 --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 env SLURM_CONF="$conf" srun "$@" 2>&1
}
want=$(step_with "$dir/slurm.conf" "${big[@]}" echo step-ran | grep "step refused")
before=$(svc_posts)
out=$(step_with "$dir/slurm-ep.conf" "${big[@]}" --llm-check echo step-ran); rc=$?
[[ $rc -ne 0 && $out != *step-ran* && -n $want && $(grep "step refused" <<<"$out") == "$want" && \
   $out == *"trainfit: step checked by $svc/edge/training"* && $(svc_posts) -gt $before ]] \
  && ok "endpoint=: an srun step is judged on the service's numbers, the same refusal as in-process" \
  || fail "endpoint srun step" "rc=$rc want: $want posts $before -> $(svc_posts)" "$out"
out=$(step_with "$dir/slurm-ep.conf" --llm-model=llama3-8b --llm-zero=3 echo step-ran); rc=$?
[[ $rc -eq 0 && $out == *step-ran* ]] && ok "endpoint=: an srun step that fits runs" || fail "endpoint srun fits" "rc=$rc" "$out"
out=$(step_with "$dir/slurm-down.conf" --llm-model=llama3-8b --llm-zero=3 echo step-ran); rc=$?
[[ $rc -eq 0 && $out == *step-ran* && $out == *"no endpoint answered"*"; computed locally"* ]] \
  && ok "endpoint= down: the srun step is checked locally, saying so" || fail "endpoint srun down" "rc=$rc" "$out"
oom=(--llm-model=llama3-8b --llm-seq=16384 --llm-zero=3 echo step-ran)  # past the capacity even at the range's low end
want=$(step_with "$dir/slurm.conf" "${oom[@]}" | grep "step refused")
out=$(step_with "$dir/slurm-down.conf" "${oom[@]}"); rc=$?
[[ $rc -ne 0 && $want == *"(or: --llm-"* && $(grep "step refused" <<<"$out") == "$want" ]] \
  && ok "endpoint= down: the step's refusal, computed locally, keeps its advice (${want##*min_gpus_to_fit=})" \
  || fail "endpoint srun down advice" "rc=$rc want: $want" "$out"
out=$(step_with "$dir/slurm-refuse.conf" --llm-model=llama3-8b --llm-zero=3 echo step-ran); rc=$?
[[ $rc -ne 0 && $out != *step-ran* && $out == *"no endpoint answered"*"(endpoint_fallback=refuse); step refused"* ]] \
  && ok "endpoint= down, endpoint_fallback=refuse: the srun step is refused, saying why" || fail "endpoint srun refuse" "rc=$rc" "$out"
kill -TERM "$svc_pid" 2>/dev/null

# ---- 6. trainfit.conf as a key = value file, whatever it holds ----
restart() { cluster_stop "$dir"; : > "$dir/log/slurmctld.log"; cluster_start "$dir" "$build/plugin" trainfit; }
printf '# never run closed here\naction = deny\n' > "$dir/trainfit.conf"
restart || fail "restart with a comment mentioning closed"
out=$(sbatch -H --parsable --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && grep -q "trainfit.conf line 2: action='deny' is not valid; accepted: reject|resize|warn; on_error = open" "$dir/log/slurmctld.log" \
  && ok "invalid file, 'closed' only in a comment: starts, admits (on_error = open), names the line" || fail "comment closed" "rc=$rc $out"
for special in fifo dir; do
  rm -rf "$dir/trainfit.conf"; if [[ $special == fifo ]]; then mkfifo "$dir/trainfit.conf"; else mkdir "$dir/trainfit.conf"; fi
  if restart; then  # the file is opened without blocking: a FIFO cannot hang slurmctld
    what=$([[ $special == fifo ]] && echo "a FIFO" || echo "a directory")
    grep -q "trainfit.conf: is $what, not a regular file" "$dir/log/slurmctld.log" && ok "trainfit.conf as $what: reported as such; slurmctld starts" \
      || fail "conf $special" "$(grep trainfit "$dir/log/slurmctld.log" | tail -2)"
  else fail "conf $special: slurmctld did not start"; fi
done
rm -rf "$dir/trainfit.conf"
printf 'action = deny\non_error = Closed\n' > "$dir/trainfit.conf"
cluster_stop "$dir"; : > "$dir/log/slurmctld.log"
TRAINFIT_CONF="$dir/trainfit.conf" cluster_exec "$dir" timeout 30 /usr/sbin/slurmctld -D -f "$dir/slurm.conf" >/dev/null 2>&1; rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] && grep -q "on_error = closed: refusing to start" "$dir/log/slurmctld.log" \
  && ok "on_error = Closed with an invalid file: slurmctld refuses to start" || fail "closed" "rc=$rc" "$(tail -3 "$dir/log/slurmctld.log")"
# ---- 12 (cont.). An internal error: on_error = closed refuses with Slurm's internal-error line ----
write_conf "on_error = closed"
TRAINFIT_FAIL_DECISIONS=1 restart || fail "restart with the failure hook"
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $(sed -n 1p <<<"$out") == "sbatch: error: trainfit: internal error; job refused (on_error = closed)" &&
   $(sed -n 2p <<<"$out") == "sbatch: error: Batch job submission failed: Slurm internal error, contact system administrator" ]] &&
   grep -q "job_submit/trainfit: internal error: TRAINFIT_FAIL_DECISIONS" "$dir/log/slurmctld.log" \
  && ok "internal error, on_error = closed: refused with the internal-error line; logged" || fail "internal closed" "rc=$rc" "$out"
write_conf "on_error = open"
await_reload
out=$(sbatch -H --parsable --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "internal error, on_error = open: admitted" || fail "internal open" "rc=$rc" "$out"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
scontrol ping | grep -q UP && ok "slurmctld survives every internal error" || fail "slurmctld after internal errors"
write_conf
restart || fail "final restart"

# ---- 15 (issue 34). What a submit record is, and what an --exclusive job holds ----
# job_submit cannot tell `sbatch --test-only` (REQUEST_JOB_WILL_RUN) from a submission, nor see
# Slurm refuse a job after it (docs/slurm.md, "Audit log"): both are audited as `submit`. The job's
# AdminComment carries its decision id, so `trainfit report --jobs` counts an admitted submission
# only when a job carries its decision. Run as root and as the ordinary user.
probe_lines=$(audit_lines)
: > "$dir/probe-jobs.txt"
decision_of() { json "$1" "['decision_id']"; }
declare -A probe_id srun_probe_id real_id refused_id
for who in root "$user"; do
  run_as() { if [[ $who == root ]]; then "$@"; else as_user "$@"; fi; }
  out=$(run_as sbatch --test-only --gpus=h100:4 --llm-model=llama3-8b --llm-zero=3 --llm-recompute=full --llm-check --wrap true 2>&1); rc=$?
  rec=$(last_audit)
  probe_id[$who]=$(decision_of "$rec")
  [[ $rc -eq 0 && $out == *"trainfit: fits:"* && $out == *"to start at"* && $(json "$rec" "['event']") == submit &&
     $(json "$rec" "['action']") == accept ]] \
    && ok "$who: sbatch --test-only hears the verdict; audited as a submit decision (job_submit cannot tell)" \
    || fail "$who: test-only verdict" "rc=$rc" "$out" "$rec"
  out=$(run_as srun --test-only --gpus=h100:4 --llm-model=llama3-8b --llm-zero=3 --llm-recompute=full --llm-check true 2>&1); rc=$?
  rec=$(last_audit)
  [[ $rc -eq 0 && $out == *"trainfit: fits:"* && $out == *"to start at"* && $(json "$rec" "['event']") == submit &&
     $(decision_of "$rec") != "${probe_id[$who]}" ]] \
    && ok "$who: srun --test-only hears the verdict; audited as a submit decision" || fail "$who: srun test-only" "rc=$rc" "$out" "$rec"
  srun_probe_id[$who]=$(decision_of "$rec")
  out=$(run_as sbatch --test-only --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
  [[ $rc -ne 0 && $out == *"trainfit: llama3-70b at seq 8192 needs"*"min_gpus_to_fit="* ]] \
    && ok "$who: sbatch --test-only of a job that does not fit hears the refusal" || fail "$who: test-only refusal" "rc=$rc" "$out"
  job=$(run_as sbatch -H --parsable --gpus=h100:4 --llm-model=llama3-8b --llm-zero=3 --llm-recompute=full --wrap true 2>/dev/null)
  real_id[$who]=$(decision_of "$(last_audit)")
  # Admitted by trainfit, then refused by Slurm's job_allocate: more memory than the node has
  # (512000 MB). Slurm keeps a FAILED job record with reason BadConstraints (job_mgr.c).
  out=$(run_as sbatch --mem=600G --gpus=h100:4 --llm-model=llama3-8b --llm-zero=3 --llm-recompute=full --wrap true 2>&1); rc=$?
  rec=$(last_audit)
  refused_id[$who]=$(decision_of "$rec")
  # The jobs as squeue prints them (no accounting here), before MinJobAge (2 s) purges the FAILED one.
  squeue -a -h -t all -O "State:|,Reason:|,admin_comment:|" >> "$dir/probe-jobs.txt"
  [[ -n $job && $rc -ne 0 && $out == *"Requested node configuration is not available"* && $(json "$rec" "['action']") == accept &&
     ${refused_id[$who]} != "${real_id[$who]}" ]] \
    && ok "$who: a job Slurm refuses after trainfit admitted it is audited as an accepted submit (the plugin cannot see it)" \
    || fail "$who: refused after the plugin" "job=$job rc=$rc" "$out" "$rec"
done
# The report counts an admitted submission only when a job that ran or may run carries its decision.
tail -n +"$((probe_lines + 1))" "$dir/audit.jsonl" > "$dir/probe-audit.jsonl"
report=$("$trainfit" report --audit "$dir/probe-audit.jsonl" --jobs "$dir/probe-jobs.txt" --format json 2>&1)
all_ids=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(json.loads(l)["decision_id"] for l in open(sys.argv[1])))' "$dir/probe-audit.jsonl")
expect_ok=1
for who in root "$user"; do
  grep -q "decision ${real_id[$who]}\b" "$dir/probe-jobs.txt" || expect_ok=0
  grep -q "decision ${probe_id[$who]}\b\|decision ${srun_probe_id[$who]}\b" "$dir/probe-jobs.txt" && expect_ok=0  # a probe leaves no job
  grep -q "^FAILED|BadConstraints|.*decision ${refused_id[$who]}\b" "$dir/probe-jobs.txt" || expect_ok=0
done
# Expected from the requests: per identity 3 probes (sbatch and srun accepted, one refused), one
# job, one job Slurm refused; the accepted probes and Slurm's refusal are no job that ran.
[[ $expect_ok -eq 1 && $(json "$report" "['input']['unconfirmed_submissions']") == 6 &&
   $(json "$report" "['totals']['records']") == 4 && $(json "$report" "['totals']['reject']") == 2 &&
   $(json "$report" "['totals']['accept']") == 2 ]] \
  && ok "trainfit report --jobs: probes and jobs Slurm refused are left out; refusals and real jobs counted" \
  || fail "report --jobs" "ids: $all_ids" "$(cat "$dir/probe-jobs.txt")" "$report"
scancel --user root 2>/dev/null; scancel --user "$user" 2>/dev/null
# --exclusive with 4 GPUs named: Slurm allocates the node's 64 (JOB_GRES, scontrol show job -d);
# the stamp, the message and the audit say so; the judgement stays on the 4.
for who in root "$user"; do
  run_as() { if [[ $who == root ]]; then "$@"; else as_user "$@"; fi; }
  out=$(run_as sbatch --parsable --exclusive --gpus=h100:4 --llm-model=llama3-8b --llm-zero=3 --llm-recompute=full --llm-check -o /dev/null --wrap "sleep 60" 2>&1)
  job=$(tail -1 <<<"$out")
  rec=$(last_audit)
  for _ in $(seq 100); do [[ $(field JobState "$job") == RUNNING ]] && break; sleep 0.2; done
  held=$(scontrol show job -d "$job" | grep -o 'JOB_GRES=gpu:h100:[0-9]*' | head -1); held=${held##*:}
  stamp=$(scontrol show job "$job" | grep -o 'AdminComment=.*')
  if [[ -n $held && $held -gt 4 && $stamp == *"GiB per GPU on 4 of the $held x h100 the job holds (--exclusive);"*"; decision "* &&
        $out == *"(--exclusive: the job holds $held x h100; judged on 4 of them)"* && $(json "$rec" "['gpus_held']") == "$held" &&
        $(json "$rec" "['gpus_requested']") == 4 ]]; then
    ok "$who: --exclusive --gpus=h100:4 is stamped, told and audited as the $held GPUs Slurm allocates (JOB_GRES)"
  else fail "$who: exclusive held" "job=$job JOB_GRES count=$held stamp=$stamp" "$out" "$rec"; fi
  scancel "$job" 2>/dev/null
  for _ in $(seq 50); do [[ -z $(squeue -h -j "$job" -t R,CG 2>/dev/null) ]] && break; sleep 0.2; done
done
