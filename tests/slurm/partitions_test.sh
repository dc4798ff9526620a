#!/usr/bin/env bash
# slurm.conf's partitions and nodes on a real slurmctld (as root and as an ordinary user):
# the Default=YES partition's rules for a job without -p, untyped GPUs judged as the
# partition's nodes' GPUs (--constraint where it selects them), a partition without GPU
# nodes, resizes bounded by the partition's GPU nodes, exempt_accounts without
# AccountingStorageEnforce in slurmctld's log, and an srun step honouring exempt_users.
# Expected verdicts come from the trainfit CLI on the stated GPU or from Slurm's own answers.
# Usage: partitions_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
trainfit=$build/cli/trainfit
dir=$(mktemp -d /tmp/trainfit-partitions.XXXXXX)
chmod 755 "$dir"
cd "$dir"
source "$here/cluster.sh"
source "$here/checks.sh"
user=trainfit-ci
export CLUSTER_MESSAGE_TIMEOUT=30

cleanup() { cluster_stop "$dir"; }
trap 'checks_finish cleanup' EXIT
if [[ $(id -u) -ne 0 ]]; then echo "partitions_test.sh: needs root (munged, slurmctld)"; exit 1; fi
id "$user" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$user"
as_user() { runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
nospank() { SLURM_CONF=$dir/slurm-nospank.conf "$@"; }
field() { scontrol show job -o "$2" 2>/dev/null | grep -o "\b$1=[^ ]*" | head -1 | cut -d= -f2-; }
# submit WHO HOW ANNOTATION SBATCH_ARGS...: WHO root|user; HOW spank (the annotation as
# --llm-KEY=VALUE options) or nospank (as --comment="trainfit: ...", job_submit alone);
# sets rc, out and job (the id when one was queued).
submit() {
  local who=$1 how=$2 annotation=$3 conf=$SLURM_CONF args=() kv
  shift 3
  if [[ -n $annotation && $how == spank ]]; then
    for kv in $annotation; do args+=("--llm-$kv"); done
  elif [[ -n $annotation ]]; then
    args+=("--comment=trainfit: $annotation")
  fi
  [[ $how == nospank ]] && conf=$dir/slurm-nospank.conf
  if [[ $who == user ]]; then
    out=$(runuser -u "$user" -- env SLURM_CONF="$conf" sbatch -H --parsable "${args[@]}" "$@" --wrap true 2>&1); rc=$?
  else
    out=$(SLURM_CONF=$conf sbatch -H --parsable "${args[@]}" "$@" --wrap true 2>&1); rc=$?
  fi
  job=$(tail -1 <<<"$out")
  [[ $rc -eq 0 && $job =~ ^[0-9]+$ ]] || job=""
}
# each LABEL PREDICATE ANNOTATION SBATCH_ARGS...: the submission as root and as the user, with
# and without the SPANK plugin; PREDICATE reads rc, out and job.
each() {
  local label=$1 predicate=$2 who how
  shift 2
  for who in root user; do
    for how in spank nospank; do
      submit "$who" "$how" "$@"
      if "$predicate"; then ok "$label ($who, $how)"; else fail "$label ($who, $how)" "rc=$rc" "$out"; fi
      if [[ -n $job ]]; then scancel "$job" 2>/dev/null; fi
    done
  done
}
accepted() { [[ $rc -eq 0 && -n $job ]]; }
refused_with() { [[ $rc -ne 0 && -z $job && $out == *"$want"* ]]; }
refused() { refused_with; }

# ---- The cluster: FUTURE nodes (no slurmd): 4 A100 40GB nodes, 2 H100 nodes, 2 CPU-only nodes ----
nodes="NodeName=a[1-4] NodeHostname=a[1-4] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:a100-40gb:8 Features=a100 State=FUTURE
NodeName=h[1-2] NodeHostname=h[1-2] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:h100:8 Features=h100 State=FUTURE
NodeName=c[1-2] NodeHostname=c[1-2] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 State=FUTURE"
export CLUSTER_NODES_CONF="$nodes
PartitionName=strict Nodes=h[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=aonly Nodes=a[1-4] MaxTime=INFINITE State=UP
PartitionName=both Nodes=a[1-2],h[1-2] MaxTime=INFINITE State=UP
PartitionName=mixed Nodes=h[1-2],c[1-2] MaxTime=INFINITE State=UP
PartitionName=cpu Nodes=c[1-2] MaxTime=INFINITE State=UP"
# No default_partition: the default is slurm.conf's (strict). exempt_accounts without
# AccountingStorageEnforce: a warning in slurmctld's log.
# Judged on the point figure (refuse_when = likely, resize_to = point), as the CLI's min-gpus
# below counts: these checks are about which GPU a job is judged on, not about the range.
cat > "$dir/trainfit.conf" <<CONF
action = reject
refuse_when = likely
resize_to = point
gpus_per_node = 8
audit_log = $dir/audit.jsonl
partition.strict.require_annotation = true
partition.mixed.action = resize
partition.mixed.resize_max_gpus = 64
exempt_accounts = ops
CONF
cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
: > "$dir/empty-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
chmod -R a+rX "$dir"

# ---- Point 5: the Default=YES partition's rules for a job without -p ----
# Slurm's own answer first: a job without -p runs in strict.
out=$(nospank sbatch -H --parsable --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true 2>&1); rc=$?
job=$(tail -1 <<<"$out")
[[ $rc -eq 0 && $(field Partition "$job") == strict ]] && ok "Slurm runs a job without -p in strict (Default=YES)"   || fail "Slurm's default partition" "rc=$rc" "$out" "$(field Partition "$job")"
scancel "$job" 2>/dev/null
want="partition strict requires an LLM training annotation"
each "no -p, no annotation: refused by strict's require_annotation (slurm.conf's default)" refused_with "" --gpus=h100:8
each "no -p, annotated: accepted" accepted "model=llama3-8b zero=3" --gpus=h100:8

# ---- Point 6: untyped GPUs are the partition's nodes' GPUs ----
fits_job="model=llama3-8b zero=3 seq=8192 recompute=full"
tight_job="model=llama3-8b zero=3 seq=3072"  # fits 8 x H100, not 8 x A100 40GB, finite on both
cli_min() {  # cli_min "model=M seq=S ..." GPU: trainfit min-gpus on that GPU, 8 per node
  local args=() kv
  for kv in $1; do args+=("--${kv%%=*}" "${kv#*=}"); done
  "$trainfit" min-gpus "${args[@]}" --gpu "$2" --gpus-per-node 8 2>/dev/null
}
min_fit_a100=$(cli_min "$fits_job" a100-40gb)
min_tight_a100=$(cli_min "$tight_job" a100-40gb)
min_tight_h100=$(cli_min "$tight_job" h100)
numbers='^[0-9]+ [0-9]+ [0-9]+$'  # "none" (no count fits) does not suit this test either
if [[ "$min_fit_a100 $min_tight_h100 $min_tight_a100" =~ $numbers ]] &&
   (( min_fit_a100 <= 8 && min_tight_h100 <= 8 && min_tight_a100 > 8 )); then
  ok "CLI: $fits_job fits 8 x A100 40GB ($min_fit_a100); $tight_job fits 8 x H100 ($min_tight_h100), not 8 x A100 40GB ($min_tight_a100)"
else
  fail "the CLI's figures do not suit this test" "$min_fit_a100 $min_tight_h100 $min_tight_a100"
fi
each "-p aonly --gpus=8 ($fits_job): accepted as A100 40GB" accepted "$fits_job" -p aonly --gpus=8
want="on 8 x A100-40GB"
each "-p aonly --gpus=8 ($tight_job): refused as A100 40GB (min_gpus_to_fit=$min_tight_a100)" refused_with "$tight_job" -p aonly --gpus=8
want="min_gpus_to_fit=$min_tight_a100"
each "-p aonly --gpus=8: the refusal's min_gpus_to_fit is the CLI's on A100 40GB" refused_with "$tight_job" -p aonly --gpus=8
want="on 8 x A100-40GB"
each "-p both --gpus=8 (A100 and H100 nodes): judged as the smaller, refused" refused_with "$tight_job" -p both --gpus=8
each "-p both --constraint=h100 --gpus=8: judged as H100, accepted" accepted "$tight_job" -p both --constraint=h100 --gpus=8
each "-p both --constraint='a100|h100' --gpus=8: both types, refused" refused_with "$tight_job" -p both "--constraint=a100|h100" --gpus=8
# Slurm's own answer: the accepted --constraint=h100 job runs only on H100 nodes.
submit root nospank "$tight_job" -p both --constraint=h100 --gpus=8
[[ -n $job && $(field Features "$job") == h100 ]] && ok "Slurm keeps the job's Features=h100 (its nodes are h1, h2)" || fail "Features" "$out"
[[ -n $job ]] && scancel "$job"
# A Features= update: in both, the feature picks the GPU the job was judged on, and job_modify
# sees no GPU request, so a user's change needs the annotation restated (root's passes, audited).
submit user nospank "$tight_job" -p both --constraint=h100 --gpus=8
feature_job=$job
out=$(as_user scontrol update JobId="$feature_job" Features=a100 2>&1); rc=$?
[[ -n $feature_job && $rc -ne 0 && $(field Features "$feature_job") == h100 ]] \
  && ok "user: Features=a100 on the job accepted as --constraint=h100 is refused; Slurm keeps h100" || fail "Features update" "rc=$rc" "$out"
out=$(as_user scontrol update JobId="$feature_job" Features= 2>&1); rc=$?
[[ $rc -ne 0 && $(field Features "$feature_job") == h100 ]] && ok "user: clearing Features= is refused too" || fail "Features= cleared" "rc=$rc" "$out"
restated() { as_user scontrol update JobId="$feature_job" Comment="trainfit: $tight_job" TresPerJob=gres:gpu:8 Partition=both "$@" 2>&1; }
out=$(restated Features=a100); rc=$?
[[ $rc -ne 0 && $(field Features "$feature_job") == h100 ]] && ok "user: restated with Features=a100: judged on A100 40GB, refused" || fail "restated a100" "rc=$rc" "$out"
out=$(restated Features=h100); rc=$?
[[ $rc -eq 0 ]] && ok "user: restated with Features=h100: judged on H100, accepted" || fail "restated h100" "rc=$rc" "$out"
out=$(scontrol update JobId="$feature_job" Features=a100 2>&1); rc=$?
[[ $rc -eq 0 && $(field Features "$feature_job") == a100 ]] && grep -q "job $feature_job: Features update not checked" "$dir/audit.jsonl" \
  && ok "root: Features=a100 passes, audited as unchecked" || fail "root Features" "rc=$rc" "$out" "$(tail -2 "$dir/audit.jsonl")"
[[ -n $feature_job ]] && scancel "$feature_job"
want="partition cpu has no nodes with GPUs"
each "-p cpu --gpus=4 annotated: refused, the partition has no GPU nodes" refused_with "$fits_job" -p cpu --gpus=4
# Slurm's own answer, unheld (a held job, -H, is queued unchecked and never starts).
out=$(nospank sbatch -p cpu --gpus=4 --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"Requested node configuration is not available"* ]] \
  && ok "Slurm itself refuses GPUs in cpu (unheld): Requested node configuration is not available" || fail "Slurm cpu GPUs" "$out"

# ---- Point 8: resizes count the partition's GPU nodes ----
big="model=llama3-70b seq=8192 zero=3 recompute=full"
min_big=$(cli_min "$big" h100)
(( min_big > 16 )) && ok "CLI: $big needs $min_big x H100 (more than mixed's 16)" || fail "CLI big" "$min_big"
nodes_big=$(( (min_big + 7) / 8 ))
want="but partition mixed has 2 GPU nodes with h100 (16 GPUs)"
each "-p mixed resize to $min_big: refused with the partition's GPU nodes" refused_with "$big" -p mixed --gpus=h100:8
# What Slurm says of the shape the resize would have asked for (unheld: Slurm checks it then).
out=$(nospank sbatch -p mixed -N "$nodes_big" --gpus=h100:$((nodes_big * 8)) --wrap true 2>&1); rc=$?
[[ $rc -ne 0 && $out == *"Requested node configuration is not available"* ]] \
  && ok "Slurm refuses that shape itself (-N $nodes_big --gpus=h100:$((nodes_big * 8))): Requested node configuration is not available" \
  || fail "Slurm's refusal of the shape" "rc=$rc" "$out"
min_small=$(cli_min "$tight_job" h100)
want="resized from 2 to $min_small"
resized() { [[ $rc -eq 0 && -n $job && $out == *"$want"* ]]; }
each "-p mixed --gpus=h100:2 ($tight_job): resized to $min_small (CLI), within its 2 GPU nodes" resized "$tight_job" -p mixed --gpus=h100:2

# ---- Point 15: exempt_accounts without AccountingStorageEnforce, in slurmctld's log ----
grep -q "exempt_accounts: slurm.conf's AccountingStorageEnforce is not set" "$dir/log/slurmctld.log" \
  && ok "slurmctld's log warns: exempt_accounts without AccountingStorageEnforce" || fail "enforce warning" "$(grep trainfit "$dir/log/slurmctld.log" | tail -5)"
out=$("$trainfit" check-config --slurm-conf "$dir/slurm.conf" "$dir/trainfit.conf" 2>/dev/null); rc=$?
[[ $out == *"warning: exempt_accounts: slurm.conf's AccountingStorageEnforce is not set"* ]] \
  && ok "check-config warns the same on the cluster's files" || fail "check-config enforce" "rc=$rc" "$out"
# default_gpu (h100) is on none of aonly's nodes: a problem (exit 2), one line.
[[ $rc -eq 2 && $out == *"default_gpu: 'h100' is a GPU none of partition aonly's nodes has (slurm.conf: a100-40gb)"* ]] \
  && ok "check-config: default_gpu h100 is on none of aonly's nodes (exit 2)" || fail "check-config default_gpu" "rc=$rc" "$out"
grep -q "default_gpu: 'h100' is a GPU none of partition aonly's nodes has" "$dir/log/slurmctld.log" \
  && ok "slurmctld's log says so too" || fail "log default_gpu" "$(grep trainfit "$dir/log/slurmctld.log" | tail -5)"

# ---- Point 9: an srun step honours exempt_users (the policy assembled as slurmctld's) ----
cluster_stop "$dir"
unset CLUSTER_NODES_CONF
cat > "$dir/trainfit.conf" <<CONF
action = reject
gpus_per_node = 64
audit_log = $dir/audit.jsonl
exempt_users = $user
CONF
cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
chmod -R a+rX "$dir"
min64=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 64)
step() { timeout 120 salloc -n 4 --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 \
  srun --llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full echo step-ran 2>&1; }
out=$(step); rc=$?
[[ $rc -ne 0 && $out != *step-ran* && $out == *"min_gpus_to_fit=$min64"*"step refused"* ]] \
  && ok "root (not exempt): the srun step predicted to OOM is refused" || fail "root step" "rc=$rc" "$out"
out=$(cd /tmp && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" bash -c "$(declare -f step); step"); rc=$?
[[ $rc -eq 0 && $out == *step-ran* ]] && ok "$user (exempt_users): the same srun step runs" || fail "exempt step" "rc=$rc" "$out"

# ---- slurm.conf's Include: nodes and partitions in included files are slurmctld's too ----
cluster_stop "$dir"
echo "NodeName=a[1-4] NodeHostname=a[1-4] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:a100-40gb:8 Features=a100 State=FUTURE" > "$dir/nodes-a.conf"
echo "PartitionName=all Nodes=ALL MaxTime=INFINITE State=UP Default=YES" > "$dir/partitions.conf"
export CLUSTER_NODES_CONF="NodeName=h[1-2] NodeHostname=h[1-2] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:h100:8 Features=h100 State=FUTURE
Include nodes-a.conf
Include $dir/partitions.conf"
cat > "$dir/trainfit.conf" <<CONF
action = reject
refuse_when = likely
resize_to = point
gpus_per_node = 8
audit_log = $dir/audit.jsonl
default_partition = all
CONF
cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
chmod -R a+rX "$dir"
# Slurm's own answer: partition all (the default) holds the included A100 40GB nodes.
all_nodes=$(scontrol show partition all | grep -o '\bNodes=[^ ]*' | cut -d= -f2)
[[ $all_nodes == *a*1-4* && $(scontrol show partition all) == *Default=YES* ]] \
  && ok "Slurm: partition all (Default=YES, from an Include) has the included nodes ($all_nodes)" || fail "Slurm's partition all" "$all_nodes"
want="on 8 x A100-40GB"
each "Include: -p all --gpus=8 ($tight_job) judged on the included A100 40GB nodes, refused" refused_with "$tight_job" -p all --gpus=8
each "Include: no -p (all is the default there) --gpus=8 ($tight_job): refused as A100 40GB" refused_with "$tight_job" --gpus=8
# The record of a job without -p names the default partition trainfit.conf says (default_partition).
last=$(tail -1 "$dir/audit.jsonl")
[[ $last == *'"partition":"all"'* ]] && ok "the audit record of a job without -p names partition all (default_partition)" \
  || fail "audit partition of a job without -p" "$last"
each "Include: -p all --constraint=h100 --gpus=8 ($tight_job): judged as H100, accepted" accepted "$tight_job" -p all --constraint=h100 --gpus=8
# An edit of an included file alone reloads the policy (the watcher stamps every file it read).
reloads() { grep -c "reloaded; policy in force" "$dir/log/slurmctld.log"; }
before=$(reloads)
echo "# edited" >> "$dir/nodes-a.conf"
for _ in $(seq 50); do (( $(reloads) > before )) && break; sleep 0.1; done
(( $(reloads) > before )) && ok "an edit of the included nodes-a.conf reloads the policy" || fail "include reload" "$(grep trainfit "$dir/log/slurmctld.log" | tail -3)"

# Without trainfit.conf (the built-in defaults) slurm.conf's facts still apply: all is the
# default partition, and its included A100 40GB nodes judge untyped GPUs.
cluster_stop "$dir"
TRAINFIT_CONF_PATH=$dir/no-trainfit.conf cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
chmod -R a+rX "$dir"
grep -q "no-trainfit.conf not found; using the built-in defaults" "$dir/log/slurmctld.log" && ok "slurmctld runs on the built-in defaults" || fail "defaults" "$(grep trainfit "$dir/log/slurmctld.log" | tail -3)"
want="on 8 x A100-40GB"
# The built-in defaults refuse only past the likely range's low end (refuse_when = certain): a job
# well past 8 x A100 40GB even at its range's low end.
over_job="model=llama3-8b zero=3 seq=16384"
each "built-in defaults: no -p --gpus=8 ($over_job): judged on the A100 40GB nodes, refused" refused_with "$over_job" --gpus=8
