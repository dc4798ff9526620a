#!/usr/bin/env bash
# Faults on the real loopback cluster (root): trainfit.conf missing, unreadable, not a
# regular file (FIFO, directory, /dev/zero) and huge, at slurmctld start and at reload;
# site catalogs (gpus.d/models.d) with errors and with a valid new GPU and model; the
# audit log on a read-only filesystem and rotated away mid-run; unknown GPU types and
# models. Expected behaviour from docs/slurm.md and docs/site.md, numbers from the CLI.
# (integration_test.sh already covers: invalid file at start and at reload, FIFO and
# directory at start, on_error = closed, a full audit filesystem.)
# Usage: faults_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
trainfit=$build/cli/trainfit
forge=${STORM_FORGE:-$build/tests/forge_submit}
dir=$(mktemp -d /tmp/trainfit-faults.XXXXXX)
chmod 755 "$dir"
cd "$dir"  # accepted jobs write slurm-N.out into the submit directory: here, not the checkout
source "$here/cluster.sh"
source "$here/checks.sh"
user=trainfit-ci
cleanup() {
  cluster_stop "$dir"
  mountpoint -q "$dir/ro" && umount "$dir/ro"
}
trap 'checks_finish cleanup' EXIT
# The tmpfs of the audit-log test is mounted before any daemon starts: the daemons run in a
# private mount namespace (cluster.sh, cluster_exec), which copies the mounts there at its start.
mkdir -p "$dir/ro"
mount -t tmpfs -o size=1m,mode=0755 tmpfs "$dir/ro" 2>/dev/null
if [[ $(id -u) -ne 0 ]]; then echo "faults_test.sh: needs root (munged, slurmctld)"; exit 1; fi
id "$user" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$user"

# Eight 8-GPU H100 nodes and two A40 nodes, FUTURE (no slurmd): submissions are decided
# and held; nothing runs.
export CLUSTER_NODES_CONF="NodeName=n[1-8] NodeHostname=n[1-8] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=FUTURE
NodeName=n[9-10] NodeHostname=n[9-10] NodeAddr=127.0.0.1 CPUs=64 RealMemory=512000 Gres=gpu:a40:8 State=FUTURE
PartitionName=gpu Nodes=n[1-8] Default=YES MaxTime=INFINITE State=UP
PartitionName=site Nodes=n[9-10] MaxTime=INFINITE State=UP"
export TRAINFIT_CATALOG_DIR=$dir/catalog   # slurmctld's (job_submit) catalog folder
mkdir -p "$dir/catalog/gpus.d" "$dir/catalog/models.d"
conf=$dir/trainfit.conf
good_conf() {  # the policy whose effect is visible: an oversized job is warned, not rejected
  # (partition "site" rejects: unknown GPU types and models are refused there, per docs)
  cat > "$1" <<CONF
action = warn
gpus_per_node = 8
audit_log = ${audit:-$dir/audit.jsonl}
partition.site.action = reject
CONF
}
install_good() { good_conf "$dir/new.conf"; mv -f "$dir/new.conf" "$conf"; }  # by rename, as docs/slurm.md advises
good_conf "$conf"
log=$dir/log/slurmctld.log
mkdir -p "$dir/log"
restart() {  # restart [TRAINFIT_CONF path]: slurmctld reads the policy at start
  cluster_stop "$dir"; : > "$log"
  TRAINFIT_CONF_PATH=${1:-$conf} cluster_start "$dir" "$build/plugin" trainfit
}
restart || { cat "$log"; exit 1; }
: > "$dir/empty-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
chmod -R a+rX "$dir"
NS=(env "SLURM_CONF=$dir/slurm-nospank.conf")
settle() { sleep 0.3; }
json() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
min8=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 8)
bigc="trainfit: model=llama3-70b seq=8192 zero=3 recompute=full"

# probe: an oversized job (llama3-70b on 8 x H100, min_gpus_to_fit from the CLI) shows the
# policy in force: "warned" (the good policy), "rejected" (the built-in defaults: reject),
# "silent" (admitted without a word: no policy, every job admitted).
probe() {
  local out rc t0 t1
  t0=$(date +%s%N)
  out=$(timeout 30 "${NS[@]}" sbatch -H --parsable --gpus=h100:8 --comment="$bigc" --wrap true 2>&1); rc=$?
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 )) > "$dir/probe_ms"   # probe runs in $(...)
  if [[ $rc -eq 0 ]]; then timeout 10 scancel "$(tail -1 <<<"$out")" 2>/dev/null; fi
  if [[ $rc -eq 0 && $out == *"min_gpus_to_fit=$min8"* ]]; then echo warned
  elif [[ $rc -eq 1 && $out == *"min_gpus_to_fit=$min8"* ]]; then echo rejected
  elif [[ $rc -eq 0 && $out != *trainfit* ]]; then echo silent
  else echo "other(rc=$rc: $(tr '\n' '|' <<<"$out"))"
  fi
}
responsive() { timeout 5 scontrol ping 2>/dev/null | grep -q UP; }

[[ $(probe) == warned ]] && ok "the good policy: an oversized job is warned (min_gpus_to_fit=$min8 from the CLI)" || fail "good policy probe" "$(probe)"

# ---- trainfit.conf at reload: the policy in force stays, each case reported as what it is ----
reload_case() {  # reload_case NAME EXPECTED_LOG_REGEX PROBE_AFTER_A_RESTART SETUP_COMMAND...
  local name=$1 want=$2 fresh=$3; shift 3
  local before; before=$(wc -l < "$log")
  "$@"
  sleep 3.2   # the watcher looks once a second, and leaves a file changed <1 s ago
  # The next submissions reload: the file must neither block them (a FIFO) nor lose the policy.
  local p1 p2; p1=$(probe); p2=$(probe)
  local said; said=$(tail -n +$((before + 1)) "$log" | grep "job_submit/trainfit" | grep -E "$want" | head -1)
  if [[ $p1 == warned && $p2 == warned && -n $said ]] && responsive && [[ $(cat "$dir/probe_ms") -lt 5000 ]]; then
    ok "reload, trainfit.conf $name: the policy in force stays; logged: ${said#*job_submit/trainfit: }"
  else
    fail "reload, trainfit.conf $name" "probes: $p1 / $p2 ($(cat "$dir/probe_ms") ms)" "log: $(tail -n +$((before + 1)) "$log" | grep trainfit | tail -3)"
  fi
  # scontrol reconfigure: up to 23.11 slurmctld keeps its job_submit plugins loaded (the policy
  # in force stays); 24.11 re-executes itself (measured: "slurmctld version ... started" again),
  # so the plugin starts afresh on the broken file, as at a start (docs/slurm.md, "Slurm releases").
  local starts; starts=$(grep -c "slurmctld version .* started" "$log")
  local rc_reconf; timeout 20 scontrol reconfigure >/dev/null 2>&1; rc_reconf=$?
  local expect=warned how="kept loaded: the policy in force stays"
  for _ in $(seq 50); do responsive && break; sleep 0.2; done
  if (( $(grep -c "slurmctld version .* started" "$log") > starts )); then expect=$fresh how="restarted slurmctld: the plugin started afresh"; fi
  p1=$(probe)
  if [[ $rc_reconf -eq 0 && $p1 == "$expect" ]] && responsive; then
    ok "reload, trainfit.conf $name + scontrol reconfigure ($how): probe $p1"
  else
    fail "reload, trainfit.conf $name + scontrol reconfigure ($how)" "probe: $p1, expected $expect, rc=$rc_reconf" "log: $(grep trainfit "$log" | tail -3)"
  fi
  rm -rf "$conf"; install_good; sleep 3.2
  # After a restart the good file is read at the watcher's next look, as after any edit.
  [[ $(probe) == warned ]] || fail "the good policy back after $name" "$(grep trainfit "$log" | tail -2)"
}
# At a fresh start (a 24.11 reconfigure): a missing file means the built-in defaults
# (action = reject); a file that cannot be read means on_error (open here: every job admitted).
reload_case "removed" "was removed; the policy in force stays" rejected rm -f "$conf"
reload_case "a FIFO" "is a FIFO, not a regular file.*the policy in force stays" silent eval 'rm -f "$conf"; mkfifo "$conf"'
reload_case "a directory" "is a directory, not a regular file.*the policy in force stays" silent eval 'rm -f "$conf"; mkdir "$conf"'
reload_case "-> /dev/zero" "is a character device, not a regular file.*the policy in force stays" silent eval 'rm -f "$conf"; ln -s /dev/zero "$conf"'
reload_case "of 100 MB" "is 104857600 bytes; accepted: at most 1048576.*the policy in force stays" silent eval 'truncate -s 100M "$dir/huge"; mv "$dir/huge" "$conf"'
# Root reads through any permission bits, so "cannot be read" is checked twice: the same
# reader as an ordinary user (check-config shares the plugin's parser), and in slurmctld
# through a path whose parent is not a directory (ENOTDIR), below at start. (At reload
# TRAINFIT_CONF's parent is the test folder itself, which cannot become a file.)
good_conf "$dir/private.conf"; chmod 000 "$dir/private.conf"
out=$(runuser -u "$user" -- "$trainfit" check-config "$dir/private.conf" 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"private.conf: cannot be read: Permission denied"* ]] && ok "chmod 000, as a non-root reader: 'cannot be read: Permission denied'" \
  || fail "chmod 000 as a user" "rc=$rc" "$out"

# ---- trainfit.conf at start: the plugin starts, reports what the file is, admits per docs ----
start_case() {  # start_case NAME PATH EXPECTED_LOG_REGEX EXPECTED_PROBE
  local name=$1 path=$2 want=$3 expect=$4
  if ! restart "$path"; then  # bounded: cluster_start gives up after ~20 s of no answer
    fail "start, trainfit.conf $name: slurmctld did not start (or hung)" "$(tail -3 "$log")"; return
  fi
  local said; said=$(grep "job_submit/trainfit" "$log" | grep -E "$want" | head -1)
  local p; p=$([[ $expect == none ]] && echo none || probe)
  if [[ -n $said && $p == "$expect" ]] && responsive; then ok "start, trainfit.conf $name: starts, $([[ $expect == none ]] && echo "responsive" || echo "probe $p"); logged: ${said#*job_submit/trainfit: }"
  else fail "start, trainfit.conf $name" "probe: $p" "$(grep trainfit "$log" | tail -3)"; fi
}
export SLURM_CONF=$dir/slurm.conf
truncate -s 100M "$dir/huge.conf"
: > "$dir/notadir"
start_case "of 100 MB" "$dir/huge.conf" "is 104857600 bytes; accepted: at most 1048576; on_error = open: admitting every job" silent
start_case "-> /dev/zero" /dev/zero "is a character device, not a regular file; on_error = open: admitting every job" silent
start_case "unreadable (ENOTDIR)" "$dir/notadir/trainfit.conf" "cannot be read: Not a directory; on_error = open: admitting every job" silent
# Missing: the built-in defaults (action = reject) apply. Their audit_log is the system's
# /var/log/slurm/trainfit-audit.jsonl, so no annotated job is sent here (it would be audited
# there): the log line is checked, and that slurmctld answers and decides an unannotated job.
start_case "missing" "$dir/absent.conf" "absent.conf not found; using the built-in defaults \(action = reject" none
out=$(timeout 30 "${NS[@]}" sbatch -H --parsable --gpus=h100:8 --wrap true 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "missing trainfit.conf: an unannotated job is decided (passes)" || fail "missing conf: unannotated job" "rc=$rc $out"
timeout 10 scancel "$(tail -1 <<<"$out")" 2>/dev/null
rm -f "$dir/huge.conf" "$dir/huge"
restart || fail "restart with the good policy" "$(tail -3 "$log")"

# ---- Unknown GPU types and models: a clear refusal, never a crash ----
out=$(timeout 30 "${NS[@]}" sbatch -H -p site --gres=gpu:a40:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"GPU type 'a40' is not in trainfit's catalog"*"gpu_alias.a40 = "* && $out == *"Invalid GRES specification (with and without type identification)"* ]] \
  && ok "--gres=gpu:a40:8 without a catalog entry: refused, naming the gpu_alias key" || fail "unknown a40" "rc=$rc" "$out"
for odd in 'h100;rm' 'h$(id)' 'a40%x' "$(printf 'h\x01x')"; do
  out=$(timeout 30 "${NS[@]}" sbatch -H -p site --gres="gpu:$odd:8" --comment="trainfit: model=llama3-8b zero=3" --wrap true 2>&1); rc=$?
  if [[ $rc -ne 0 && $rc -ne 124 && -n $out ]] && responsive; then ok "GPU type '$(printf %q "$odd")': refused ($(head -1 <<<"$out" | cut -c1-90)...)"
  else fail "odd GPU type $(printf %q "$odd")" "rc=$rc" "$out"; fi
done
out=$(timeout 30 "${NS[@]}" sbatch -H -p site --gres=gpu:h100:8 --comment="trainfit: model=acme-13b zero=3" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"invalid annotation: model='acme-13b' is not in the catalog"* ]] && ok "unknown model: refused as an invalid annotation" || fail "unknown model" "rc=$rc" "$out"
grep -q $'\x01' "$log" && fail "a control character reached slurmctld's log"

# ---- Site catalogs: a valid GPU and model become usable after reload; a bad file keeps them ----
cat > "$dir/catalog/gpus.d/10-site.json" <<'JSON'
{"gpus": [
  {"name": "a40", "description": "NVIDIA A40 48 GB", "capacity_bytes": 48305799168, "device_names": ["NVIDIA A40"]}
]}
JSON
cat > "$dir/catalog/models.d/10-acme.json" <<'JSON'
{"models": [
  {"name": "acme-13b", "layers": 40, "hidden": 5120, "heads": 40, "kv_heads": 8, "ffn": 13824, "vocab": 64000}
]}
JSON
sleep 3   # the watcher looks once a second, leaving files changed within the last second
grep -q "job_submit/trainfit: site catalogs reloaded from $dir/catalog: " "$log" && ok "site catalogs reloaded (logged: $(grep -o 'site catalogs reloaded from .*' "$log" | tail -1))" \
  || fail "site catalog reload" "$(grep trainfit "$log" | tail -3)"
# The CLI on the same folder (while it is valid: with a bad file the CLI stops, exit 2).
cli=$("$trainfit" estimate --catalog-dir "$dir/catalog" --model acme-13b --gpu a40 --gpus 8 --zero 3 --recompute full 2>/dev/null | tail -1)
check_site_job() {  # check_site_job LABEL: acme-13b on 8 x A40, decided with the CLI's numbers
  local out rc
  local needs=${cli#*needs }; needs=${needs%% GiB*}
  local usable; usable=$(grep -o '([0-9.]* GiB usable' <<<"$cli" | tr -d '(' | awk '{print $1}')
  out=$(timeout 30 "${NS[@]}" sbatch -H --parsable -p site --gres=gpu:a40:8 --comment="trainfit: model=acme-13b zero=3 recompute=full check" --wrap true 2>&1); rc=$?
  timeout 10 scancel "$(tail -1 <<<"$out")" 2>/dev/null
  local range=${cli#*GiB per GPU }; range=${range%% on 8 x*}  # "(likely L to H)": the same class's range
  if [[ $cli == FITS* && $rc -eq 0 && $out == *"needs $needs GiB per GPU $range on 8 x "*"($usable GiB usable)"* ]]; then
    ok "$1: acme-13b on --gres=gpu:a40:8 accepted, $needs GiB of $usable GiB per GPU as the CLI (--catalog-dir) says"
  else fail "$1" "CLI: $cli" "rc=$rc $out"; fi
}
check_site_job "site GPU and model usable in job_submit after reload"
printf '{"gpus": [\n  {"name": "t4",\n   "capacity_bytes": "16GB"}\n]}\n' > "$dir/catalog/gpus.d/30-bad.json"
sleep 3
grep -q "job_submit/trainfit: site catalog: $dir/catalog/gpus.d/30-bad.json:3: gpus\[0\] 't4': capacity_bytes='16GB' is not valid" "$log" &&
  grep -q "site catalogs in $dir/catalog changed but are not valid; the catalogs in use stay" "$log" \
  && ok "a bad catalog file is reported with file:line; the catalogs in use stay" || fail "bad catalog file" "$(grep 'site catalog' "$log" | tail -3)"
check_site_job "after the bad file, the previous site catalog still decides"
restart || fail "restart with a bad catalog file"
grep -q "site catalog: $dir/catalog/gpus.d/30-bad.json:3:" "$log" && grep -q "not valid; using the built-in catalogs" "$log" \
  && ok "at start, a bad catalog file: reported with file:line, the built-in catalogs used" || fail "bad catalog at start" "$(grep 'site catalog' "$log" | tail -3)"
out=$(timeout 30 "${NS[@]}" sbatch -H -p site --gres=gpu:a40:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"GPU type 'a40' is not in trainfit's catalog"* ]] && ok "... and a40 is unknown again (built-in catalogs)" || fail "a40 after bad start" "rc=$rc $out"
rm -f "$dir/catalog/gpus.d/30-bad.json"
sleep 3
check_site_job "bad file removed: the site catalog is reloaded and used"

# ---- The policy and the catalogs are one pair; reloads that never settle (docs/slurm.md) ----
# trainfit.conf maps a site GRES type to a40, then a40's catalog file is removed: the new
# catalog is refused (one line) and a job typed with the alias is still decided with a40.
good_conf "$dir/new.conf"; echo "gpu_alias.sitegpu = a40" >> "$dir/new.conf"; mv -f "$dir/new.conf" "$conf"
sleep 3.2
mv "$dir/catalog/gpus.d/10-site.json" "$dir/10-site.json.away"
sleep 3.2
# acme-13b with ZeRO-3 and full recompute fits 8 x A40 (check_site_job, the CLI's numbers).
alias_out=$(timeout 30 "${NS[@]}" sbatch -H --parsable -p site --gres=gpu:sitegpu:8 --comment="trainfit: model=acme-13b zero=3 recompute=full check" --wrap true 2>&1); rc=$?
timeout 10 scancel "$(tail -1 <<<"$alias_out")" 2>/dev/null
refusals=$(grep -c "site catalogs in $dir/catalog changed but are not installed: trainfit.conf's gpu_alias.sitegpu = a40 names a GPU the new catalog does not have" "$log")
[[ $refusals -eq 1 && $rc -eq 0 ]] \
  && ok "a catalog without the GPU trainfit.conf's gpu_alias names is refused (logged once in 3 s of looks); --gres=gpu:sitegpu:8 still decided on a40" \
  || fail "catalog/policy pair" "refusals logged: $refusals, sbatch rc=$rc $alias_out" "$(grep 'site catalog' "$log" | tail -2)"
reloads=$(grep -c "site catalogs reloaded from $dir/catalog: " "$log")
install_good   # trainfit.conf no longer names a40: the waiting catalog goes in at a next look
sleep 3.2
(( $(grep -c "site catalogs reloaded from $dir/catalog: " "$log") > reloads )) \
  && ok "... installed once trainfit.conf stopped naming a40" || fail "catalog after the policy changed" "$(grep trainfit "$log" | tail -3)"
mv "$dir/10-site.json.away" "$dir/catalog/gpus.d/10-site.json"
sleep 3.2

reject_conf() { good_conf /dev/stdout | sed 's/^action = warn$/action = reject/' > "$1"; }  # one write, in place
# trainfit.conf rewritten in place every 300 ms (never a second old): read within the 5 s bound.
( end=$((SECONDS + 11)); while (( SECONDS < end )); do reject_conf "$conf"; sleep 0.3; done ) &
rewriter=$!
sleep 8.5   # seen within a second, read 5 s later, at a look once a second
p1=$(probe)
wait "$rewriter"
[[ $p1 == rejected ]] && ok "trainfit.conf rewritten every 300 ms is reloaded within the bound (the probe is rejected by the new policy)" \
  || fail "trainfit.conf rewritten every 300 ms" "probe: $p1" "$(grep trainfit "$log" | tail -2)"
install_good; sleep 3.2
[[ $(probe) == warned ]] || fail "the good policy back after the rewrites" "$(grep trainfit "$log" | tail -2)"
# A file stamped an hour ahead (a file server's clock ahead): said once, read after the bound.
reject_conf "$dir/new.conf"; touch -d '+1 hour' "$dir/new.conf"; mv -f "$dir/new.conf" "$conf"
sleep 2.2
ahead=$(grep -c "$conf: its mtime is [0-9]* s ahead of this host's clock" "$log")
sleep 6
p1=$(probe)
[[ $ahead -eq 1 && $p1 == rejected ]] && ok "trainfit.conf with an mtime an hour ahead: logged once, reloaded after the bound" \
  || fail "future mtime" "logged $ahead times, probe $p1" "$(grep trainfit "$log" | tail -2)"
install_good; sleep 3.2
[[ $(probe) == warned ]] || fail "the good policy back after the future mtime" "$(grep trainfit "$log" | tail -2)"

# ---- The audit log on a read-only filesystem ----
if mountpoint -q "$dir/ro"; then
  : > "$dir/ro/audit.jsonl"
  mount -o remount,ro "$dir/ro"
  audit=$dir/ro/audit.jsonl install_good; sleep 3.2
  rcs=""
  for _ in 1 2 3 4 5; do
    timeout 30 "${NS[@]}" sbatch -H --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true >/dev/null 2>&1; rcs+=$?
  done
  settle
  [[ $rcs == 00000 ]] && grep -q "audit log: cannot .*$dir/ro/audit.jsonl.*Read-only file system.*records are dropped, never half-written" "$log" && responsive \
    && ok "audit log on a read-only filesystem: jobs admitted, the failure logged once" || fail "read-only audit" "rcs=$rcs" "$(grep 'audit log' "$log" | tail -2)"
  [[ $(grep -c "records are dropped, never half-written" "$log") -eq 1 ]] && ok "... logged once, not per record" || fail "read-only logged $(grep -c 'records are dropped' "$log") times"
  mount -o remount,rw "$dir/ro"
  timeout 30 "${NS[@]}" sbatch -H --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true >/dev/null 2>&1
  settle
  [[ $(wc -l < "$dir/ro/audit.jsonl") -eq 1 ]] && grep -q "audit log $dir/ro/audit.jsonl writable again; 5 records were dropped" "$log" \
    && ok "remounted read-write: writing resumes, 5 dropped records counted" || fail "ro -> rw" "$(wc -l < "$dir/ro/audit.jsonl") lines" "$(grep 'audit log' "$log" | tail -2)"
  install_good; sleep 3.2
  timeout 30 "${NS[@]}" sbatch -H --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true >/dev/null 2>&1  # moves the log back
  settle; sleep 1
  timeout 10 scancel -u root 2>/dev/null
  umount "$dir/ro" || umount -l "$dir/ro"
else
  echo "skip read-only audit test: cannot mount a tmpfs here"
fi

# ---- The audit log rotated away mid-run: no line lost or torn across both files ----
if [[ -x $forge ]]; then
  settle; rm -f "$dir/audit.jsonl"*
  install_good; sleep 3.2
  P=_SLURM_SPANK_OPTION_trainfit_llm_
  timeout 120 "$forge" -n 600 -J rot -H -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}zero=3" \
     -- gpu gres:gpu:h100:8 - "${P}model=llama3-70b" "${P}seq=8192" "${P}zero=3" "${P}recompute=full" > "$dir/rot.out" 2>&1 &
  fpid=$!
  for _ in $(seq 200); do [[ -f $dir/audit.jsonl && $(wc -l < "$dir/audit.jsonl") -ge 100 ]] && break; sleep 0.05; done
  mv "$dir/audit.jsonl" "$dir/audit.jsonl.1"   # as logrotate does (no copytruncate)
  at_move=$(wc -l < "$dir/audit.jsonl.1")
  wait "$fpid"
  sleep 1.5   # the writer looks once a second
  timeout 30 "${NS[@]}" sbatch -H --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true >/dev/null 2>&1; settle
  sent_ok=$(grep -c ' OK ' "$dir/rot.out")
  counts=$(/usr/bin/python3 - "$dir/audit.jsonl.1" "$dir/audit.jsonl" <<'PY'
import sys, json
out = []
for p in sys.argv[1:]:
    try: data = open(p, "rb").read()
    except FileNotFoundError: out += ["0", "0"]; continue
    lines = data.split(b"\n")
    torn = 0 if data.endswith(b"\n") or not data else 1
    bad = 0
    for l in lines[:-1] if data.endswith(b"\n") else lines:
        try: json.loads(l)
        except Exception: bad += 1
    out += [str(len(lines) - 1), str(bad + torn)]
print(*out)
PY
)
  read -r old_n old_bad new_n new_bad <<<"$counts"
  # 600 forged submissions (accepted or warned), then one sbatch: 601 records.
  [[ $sent_ok -eq 600 && $((old_n + new_n)) -eq 601 && $old_bad -eq 0 && $new_bad -eq 0 && $new_n -ge 1 ]] \
    && ok "audit log rotated mid-run (moved at $at_move lines): $old_n lines in the moved file + $new_n in the new one = 601 decisions, none torn" \
    || fail "rotation" "sent ok=$sent_ok old=$old_n (bad $old_bad) new=$new_n (bad $new_bad)" "$(tail -2 "$dir/rot.out")"
else
  echo "skip rotation test: $forge not built"
fi

responsive && ! grep -q "job_submit/trainfit: internal" "$log" && ok "slurmctld healthy at the end" || fail "slurmctld at the end" "$(tail -3 "$log")"
[[ $failures -eq 0 ]]
