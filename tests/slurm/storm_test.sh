#!/usr/bin/env bash
# Submission storm on the real loopback cluster (root): >10,000 submissions from
# concurrent clients (libslurm with a forged SPANK environment: forge_submit; sbatch;
# salloc; srun) mixing valid, oversized, malformed and hostile annotations, with a
# slurmctld restart mid-storm. Checks: slurmctld stays up (one deliberate restart), every
# submission gets a decision (counted per class), the audit log holds exactly one intact
# JSON line per audited decision, slurmctld's RSS stays bounded, jobs decided before the
# restart keep their verdict. Expected outcomes come from the request and the trainfit CLI.
# Usage: storm_test.sh BUILD_DIR   (env: STORM_FORGE_PER_WORKER, default 2400, 4 workers)
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
trainfit=$build/cli/trainfit
forge=${STORM_FORGE:-$build/tests/forge_submit}
dir=$(mktemp -d /tmp/trainfit-storm.XXXXXX)
chmod 755 "$dir"
cd "$dir"  # accepted jobs write slurm-N.out into the submit directory: here, not the checkout
source "$here/cluster.sh"
source "$here/checks.sh"
per_forge=${STORM_FORGE_PER_WORKER:-2400}
forge_workers=4
sbatch_per_worker=${STORM_SBATCH_PER_WORKER:-220}
bg_pids=()
cleanup() {
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
  cluster_stop "$dir"
}
trap 'checks_finish cleanup' EXIT
if [[ $(id -u) -ne 0 ]]; then echo "storm_test.sh: needs root (munged, slurmctld, slurmd)"; exit 1; fi
[[ -x $forge ]] || { echo "storm_test.sh: $forge not built"; exit 1; }

cat > "$dir/trainfit.conf" <<CONF
action = reject
headroom = 0
default_gpu = h100
gpus_per_node = 64
resize_max_gpus = 64
audit_log = $dir/audit.jsonl
partition.elastic.action = resize
CONF
cluster_start "$dir" "$build/plugin" trainfit || { cat "$dir/log/slurmctld.log"; exit 1; }
: > "$dir/empty-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/empty-plugstack.conf|" "$dir/slurm.conf" > "$dir/slurm-nospank.conf"
chmod -R a+rX "$dir"
ctld_pid() { cat "$dir/run/slurmctld.pid" 2>/dev/null; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
json() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
field() { scontrol show job -o "$2" 2>/dev/null | grep -o "\b$1=[^ ]*" | head -1 | cut -d= -f2-; }

# ---- Expectations from the CLI ----
big=(--llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full)
min64=$("$trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 64)
small_fits=$("$trainfit" estimate --model llama3-8b --zero 3 --gpu h100 --gpus 8 2>&1 | tail -1)
[[ $min64 =~ ^[0-9]+$ && $min64 -gt 8 && $min64 -le 64 && $small_fits == FITS* ]] && ok "CLI: llama3-70b needs $min64 > 8 H100s; llama3-8b ZeRO-3 fits on 8" \
  || fail "CLI expectations" "min64=$min64" "$small_fits"

# ---- Jobs decided before the storm (and the restart) keep their verdict ----
keep_ok=$(sbatch -H --parsable -J keep --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true 2>&1 | tail -1)
keep_rs=$(sbatch -H --parsable -J keep -p elastic --gpus=h100:8 "${big[@]}" --wrap true 2>&1 | tail -1)
keep_ok_stamp=$(field AdminComment "$keep_ok"); keep_rs_stamp=$(field AdminComment "$keep_rs")
[[ $keep_ok_stamp == trainfit\ accept:* || $(scontrol show job "$keep_ok" | grep -c "AdminComment=trainfit accept:") -eq 1 ]] &&
  [[ $(scontrol show job "$keep_rs" | grep -c "AdminComment=trainfit resize:") -eq 1 ]] &&
  ok "pre-storm jobs $keep_ok (accept) and $keep_rs (resize) stamped" || fail "pre-storm jobs" "$keep_ok $keep_rs"
keep_ok_line=$(scontrol show job "$keep_ok" | grep AdminComment); keep_rs_line=$(scontrol show job "$keep_rs" | grep AdminComment)
sleep 0.5
pre_lines=$(wc -l < "$dir/audit.jsonl")

# ---- The storm ----
pid1=$(ctld_pid); rss0=$(rss_kib "$pid1")
NS=(env "SLURM_CONF=$dir/slurm-nospank.conf")  # clients without the SPANK plugin
hundred_k=$(head -c 102400 /dev/zero | tr '\0' 'x')
ctl=$'\x01\x07\x1b[31m\x7f'
bad_utf8=$'\xff\xfe\xc0\xaf\xed\xa0\x80'
meta=';$(rm -rf /) `reboot` | && >/tmp/x'

# One line per submission: "PATH VARIANT EXPECTED OBSERVED". OBSERVED:
#  ok      accepted (job id / allocation)
#  stepfail  salloc/srun: the job was created (trainfit accepted it), then Slurm failed
#          the allocation or the step (slurmctld restarting, the node re-registering)
#  rej     refused by slurmctld with trainfit's message (Slurm's error line after it)
#  spank   refused on the client by the SPANK plugin (never reached slurmctld)
#  conn    Slurm's own connection error (slurmctld down: the client never got through)
#  inflight  Slurm's connection error for a request in flight when slurmctld stopped
#          (reset, zero bytes): slurmctld may or may not have decided it
#  hung    the client had to be killed by timeout (an accepted salloc/srun whose step was
#          alive across the slurmctld restart counts as stepfail: Slurm's own step teardown
#          can outlast the client's timeout then — measured once on 26.05 under CI load)
#  other   anything else (printed)
classify() {  # classify RC OUTPUT
  local rc=$1 out=$2
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then echo hung
  elif [[ $rc -ne 0 && ( $out == *"Unable to create step for job"* || $out == *"queued and waiting for resources"* ||
                         $out == *"Pending job allocation"* ) ]]; then echo stepfail  # the job was created, then Slurm failed it
  elif [[ $out == *"Unable to contact slurm controller"* || $out == *"Connection refused"* || $out == *"connect failure"* ]]; then echo conn
  elif [[ $out == *"Connection reset by peer"* || $out == *"Zero Bytes were transmitted"* || $out == *"Socket timed out"* ||
          $out == *"Transport endpoint is not connected"* || $out == *"Broken pipe"* ]]; then echo inflight
  elif [[ $rc -eq 0 ]]; then echo ok
  elif [[ $out == *"trainfit:"* && ( $out == *"submission failed:"* || $out == *"submit/allocate failed:"* || $out == *"Unable to allocate resources:"* ) ]]; then echo rej
  elif [[ $out == *"trainfit"* ]]; then echo spank
  else echo other
  fi
}
record() {  # record FILE PATH VARIANT EXPECTED RC OUTPUT STARTED (epoch s; the end is now)
  local cls; cls=$(classify "$5" "$6")
  echo "$2 $3 $4 $cls ${7:-0} $(date +%s.%N)" >> "$1"
  [[ $cls == other || $cls == hung ]] && printf '%s %s rc=%s: %s\n' "$2" "$3" "$5" "$(head -c 300 <<<"$6" | tr '\n' '|')" >> "$dir/odd.log"
}

sbatch_worker() {  # sbatch_worker N OUTFILE
  local n=$1 f=$2 i v out rc exp t0
  for ((i = 0; i < n; i++)); do
    v=$((i % 11)); t0=$(date +%s.%N)
    case $v in
      0) exp=ok; out=$(timeout 30 sbatch -H -J storm --parsable --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 --wrap true 2>&1) ;;
      1) exp=rej; out=$(timeout 30 sbatch -H -J storm --parsable --gpus=h100:8 "${big[@]}" --wrap true 2>&1) ;;
      2) exp=ok; out=$(timeout 30 sbatch -H -J storm --parsable -p elastic --gpus=h100:8 "${big[@]}" --wrap true 2>&1) ;;
      3) exp=ok; out=$(timeout 30 "${NS[@]}" sbatch -H -J storm --parsable --gpus=h100:8 --comment="trainfit: model=llama3-8b zero=3" --wrap true 2>&1) ;;
      4) exp=rej; out=$(timeout 30 "${NS[@]}" sbatch -H -J storm --parsable --gpus=h100:8 --comment="trainfit: model=llama3-8b seq=1e308 micro_batch=nan zero=-0" --wrap true 2>&1) ;;
      5) exp=rej; out=$(timeout 30 "${NS[@]}" sbatch -H -J storm --parsable --gpus=h100:8 --comment="trainfit: model=llama3-8b${ctl}${bad_utf8} seq=inf" --wrap true 2>&1) ;;
      6) exp=rej; out=$(timeout 30 "${NS[@]}" sbatch -H -J storm --parsable --gpus=h100:8 --comment="trainfit: model=$hundred_k" --wrap true 2>&1) ;;
      7) exp=spank; out=$(timeout 30 sbatch -H -J storm --parsable --gpus=h100:8 --llm-model=llama3-8b --llm-seq=18446744073709551616 --wrap true 2>&1) ;;
      8) exp=spank; out=$(timeout 30 sbatch -H -J storm --parsable --gpus=h100:8 --llm-model=llama3-8b "--llm-micro-batch=$meta" --wrap true 2>&1) ;;
      9) exp=ok; out=$(timeout 30 "${NS[@]}" sbatch -H -J storm --parsable --gpus=h100:8 --wrap true 2>&1) ;;  # unannotated: passes, not audited
      10) exp=rej; out=$(timeout 30 "${NS[@]}" sbatch -H -J storm --parsable --gpus=h100:8 --comment="trainfit: model=$meta seq=\`id\`" --wrap true 2>&1) ;;
    esac
    rc=$?
    record "$f" sbatch "$v" "$exp" "$rc" "$out" "$t0"
  done
}
salloc_worker() {  # salloc_worker N OUTFILE
  local n=$1 f=$2 i v out rc exp job t0
  for ((i = 0; i < n; i++)); do
    v=$((i % 4)); t0=$(date +%s.%N)
    case $v in
      0) exp=rej; out=$(timeout 30 salloc -J stormrun --immediate=10 --gpus=h100:8 "${big[@]}" true 2>&1) ;;
      1) exp="ok|stepfail"; out=$(timeout 30 salloc -J stormrun --no-shell --immediate=10 --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 2>&1) ;;
      2) exp=spank; out=$(timeout 30 salloc -J stormrun --no-shell --immediate=10 --gpus=h100:8 --llm-model=llama3-8b --llm-zero=inf 2>&1) ;;
      3) exp=rej; out=$(timeout 30 "${NS[@]}" salloc -J stormrun --no-shell --immediate=10 --gpus=h100:8 --comment="trainfit: model=llama3-8b seq=nan$ctl" 2>&1) ;;
    esac
    rc=$?
    job=$(grep -o 'Granted job allocation [0-9]*' <<<"$out" | awk '{print $4}')
    [[ -n $job ]] && timeout 20 scancel "$job" 2>/dev/null
    record "$f" salloc "$v" "$exp" "$rc" "$out" "$t0"
  done
}
srun_worker() {  # srun_worker N OUTFILE
  local n=$1 f=$2 i v out rc exp t0
  for ((i = 0; i < n; i++)); do
    v=$((i % 4)); t0=$(date +%s.%N)
    case $v in
      0) exp=rej; out=$(timeout 60 srun -J stormrun --immediate=20 --gpus=h100:8 "${big[@]}" true 2>&1) ;;
      1) exp="ok|stepfail"; out=$(timeout 60 srun -J stormrun --immediate=20 --gpus=h100:8 --llm-model=llama3-8b --llm-zero=3 true 2>&1) ;;
      2) exp="spank|rej"; out=$(timeout 60 srun -J stormrun --immediate=20 --gpus=h100:8 --llm-model=llama3-8b --llm-seq=-0 true 2>&1) ;;
      3) exp=rej; out=$(timeout 60 "${NS[@]}" srun -J stormrun --immediate=20 --gpus=h100:8 --comment="trainfit: model=$bad_utf8 seq=2" true 2>&1) ;;
    esac
    rc=$?
    record "$f" srun "$v" "$exp" "$rc" "$out" "$t0"
  done
}

# forge variants: PARTITION TRES COMMENT ENV...; expected: ok (accept/resize/pass) or rej.
P=_SLURM_SPANK_OPTION_trainfit_llm_
forge_variants=(
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}zero=3"                                   # 0 accept
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-70b" "${P}seq=8192" "${P}zero=3" "${P}recompute=full"  # 1 too few GPUs
  -- elastic gres:gpu:h100:8 - "${P}model=llama3-70b" "${P}seq=8192" "${P}zero=3" "${P}recompute=full"  # 2 resize
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}seq=1e308"                              # 3
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}seq=nan" "${P}micro_batch=inf"           # 4
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}seq=-0"                                 # 5
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}seq=18446744073709551616"               # 6
  -- gpu gres:gpu:h100:8 - "@BIG=102400"                                                      # 7 100 KB
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b${ctl}" "${P}zero=3"                           # 8 control characters
  -- gpu gres:gpu:h100:8 - "${P}model=${bad_utf8}" "${P}zero=3"                               # 9 invalid UTF-8
  -- gpu gres:gpu:h100:8 - "${P}model=${meta}" "${P}seq=\`id\`"                               # 10 shell metacharacters
  -- gpu gres:gpu:h100:8 - "TRAINFIT_GEOMETRY=layers=1e308,hidden=nan,heads=-0"              # 11 forged geometry
  -- gpu gres:gpu:h100:8 - "TRAINFIT_CONFIG=zero_stage=3,zero_stage=9${ctl}" "${P}model=llama3-8b"  # 12 forged config
  -- gpu gres:gpu:a40x:8 - "${P}model=llama3-8b" "${P}zero=3"                                 # 13 unknown GPU type
  -- gpu gres:gpu:h100:8 -                                                                    # 14 unannotated: pass
  -- gpu gres:gpu:h100:8 "trainfit: model=llama3-8b zero=3" "${P}zero=inf"                    # 15 forged env wins over a comment
  -- gpu gres:gpu:h100:8 - "${P}model=llama3-8b" "${P}zero=3" "${P}check="                    # 16 accept, --llm-check
)
forge_expect=(ok rej ok rej rej rej rej rej rej rej rej rej rej rej ok rej ok)
forge_audited=(1 1 1 1 1 1 1 1 1 1 1 1 1 1 0 1 1)
forge_action=(accept reject resize reject reject reject reject reject reject reject reject reject reject reject pass reject accept)

janitor() {  # cancels the storm's held jobs as they come (MinJobAge=2 purges them)
  while :; do timeout 20 scancel -n storm >/dev/null 2>&1; sleep 2; done
}
janitor & bg_pids+=($!)

# slurmctld's pid is watched all along: any change outside the restart is a failure.
watch_pid() {
  local expect=$1
  while :; do
    local now; now=$(ctld_pid)
    if [[ -f $dir/restarting ]]; then expect=; elif [[ -z $expect ]]; then expect=$now; fi
    if [[ -n $expect && ( $now != "$expect" || ! -d /proc/$expect ) ]]; then echo "$(date +%T) slurmctld $expect gone (pid file: $now)" >> "$dir/pid-watch.log"; expect=$now; fi
    sleep 0.5
  done
}
watch_pid "$pid1" & bg_pids+=($!)

total_forge=$((per_forge * forge_workers))
start=$(date +%s.%N)
worker_pids=()
for w in $(seq 1 $forge_workers); do
  timeout 400 "$forge" -n "$per_forge" -J storm -H "${forge_variants[@]}" > "$dir/forge.$w.out" 2> "$dir/forge.$w.err" &
  worker_pids+=($!)
done
sbatch_worker "$sbatch_per_worker" "$dir/w.sbatch1" & worker_pids+=($!)
sbatch_worker "$sbatch_per_worker" "$dir/w.sbatch2" & worker_pids+=($!)
salloc_worker "${STORM_OTHER:-40}" "$dir/w.salloc" & worker_pids+=($!)
srun_worker "${STORM_OTHER:-40}" "$dir/w.srun" & worker_pids+=($!)

# ---- Mid-storm: restart slurmctld ----
forge_done() { cat "$dir"/forge.*.out 2>/dev/null | wc -l; }
for _ in $(seq 600); do [[ $(forge_done) -ge $((total_forge * 2 / 5)) ]] && break; sleep 0.2; done
rss_mid=$(rss_kib "$pid1")
at_kill=$(forge_done)
touch "$dir/restarting"
kill -TERM "$pid1"
for _ in $(seq 300); do [[ -d /proc/$pid1 ]] || break; sleep 0.1; done
down_at=$(date +%s.%N)
stopped=$([[ -d /proc/$pid1 ]] && echo no || echo yes)
sleep "${STORM_DOWN_S:-12}"   # longer than a client's connect retries (MessageTimeout)
TRAINFIT_CONF=$dir/trainfit.conf cluster_exec "$dir" /usr/sbin/slurmctld -f "$dir/slurm.conf"
for _ in $(seq 100); do timeout 10 scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
up_at=$(date +%s.%N)
pid2=$(ctld_pid)
rm -f "$dir/restarting"
rss_start2=$(rss_kib "$pid2")
[[ $stopped == yes && -n $pid2 && $pid2 != "$pid1" ]] && ok "slurmctld restarted mid-storm after $at_kill forged submissions (pid $pid1 -> $pid2, down $(awk "BEGIN{printf \"%.1f\", $up_at-$down_at}") s)" \
  || fail "restart" "stopped=$stopped pid1=$pid1 pid2=$pid2"

for p in "${worker_pids[@]}"; do wait "$p"; done
end=$(date +%s.%N)
sleep 1
timeout 30 scancel -n storm >/dev/null 2>&1
sleep 4   # MinJobAge=2: the cancelled jobs are purged
rss_end=$(rss_kib "$pid2")
pid_now=$(ctld_pid)
[[ $pid_now == "$pid2" && -d /proc/$pid2 && ! -s $dir/pid-watch.log ]] && timeout 10 scontrol ping | grep -q UP \
  && ok "slurmctld stayed up through the storm (only the deliberate restart)" || fail "slurmctld died" "$(cat "$dir/pid-watch.log" 2>/dev/null)" "$(tail -5 "$dir/log/slurmctld.log")"

# ---- Every submission got a decision ----
# forge lines: "i variant OK jobid" / "i variant ERR errno text"
/usr/bin/python3 - "$dir" "$total_forge" "${forge_expect[*]}" "${forge_audited[*]}" "${forge_action[*]}" > "$dir/forge-summary" <<'PY'
import sys, glob, collections
d, total = sys.argv[1], int(sys.argv[2])
expect, audited, action = sys.argv[3].split(), [int(x) for x in sys.argv[4].split()], sys.argv[5].split()
conn_words = ("Unable to contact slurm controller", "connect failure", "Connection refused", "Communication connection failure")
inflight_words = ("Connection reset by peer", "Zero Bytes were transmitted", "Socket timed out", "Transport endpoint is not connected", "Broken pipe")
# trainfit's refusals, one Slurm error code per class (docs/slurm.md, "What users see")
decided = ("Invalid generic resource (gres) specification", "Unspecified error",
           "Invalid GRES specification (with and without type identification)", "Access/permission denied")
counts = collections.Counter(); acts = collections.Counter(); mism = []; lines = 0; texts = collections.Counter()
for f in sorted(glob.glob(d + "/forge.*.out")):
    for l in open(f, encoding="utf-8", errors="replace"):
        p = l.split(" ", 4); lines += 1
        v = int(p[1])
        if p[2] == "OK": obs = "ok"
        elif any(w in p[4] for w in conn_words): obs = "conn"
        elif any(w in p[4] for w in inflight_words): obs = "inflight"
        elif p[4].strip() in decided: obs = "rej"; texts[p[4].strip()] += 1
        else: obs = "other"; texts[p[4].strip()] += 1
        counts[obs] += 1
        if obs in ("conn", "inflight"): continue
        if obs == "other": mism.append(l.strip()); continue
        if obs != expect[v]: mism.append(l.strip())
        if audited[v]: acts[action[v]] += 1
print("lines", lines, "missing", total - lines)
print("ok", counts["ok"], "rej", counts["rej"], "conn", counts["conn"], "inflight", counts["inflight"], "other", counts["other"])
print("audit", acts["accept"], acts["reject"], acts["resize"])
print("mismatch", len(mism))
for m in mism[:5]: print("  ", m)
print("texts", dict(texts))
PY
cat "$dir/forge-summary"
read -r _ f_lines _ f_missing < <(grep '^lines' "$dir/forge-summary")
read -r _ f_ok _ f_rej _ f_conn _ f_inflight _ f_other < <(grep '^ok' "$dir/forge-summary")
read -r _ fa_acc fa_rej fa_res < <(grep '^audit' "$dir/forge-summary")
f_mism=$(grep '^mismatch' "$dir/forge-summary" | awk '{print $2}')
[[ $f_missing -eq 0 && $f_mism -eq 0 && $f_other -eq 0 && $((f_ok + f_rej + f_conn + f_inflight)) -eq $total_forge ]] \
  && ok "forged-environment submissions: $total_forge sent = $f_ok accepted + $f_rej rejected + $f_conn connection errors + $f_inflight in flight at the stop; each as the request says" \
  || fail "forged submissions" "$(cat "$dir/forge-summary")" "$(head -5 "$dir"/forge.*.err)"
grep -q "Invalid generic resource (gres) specification" "$dir/forge-summary" && grep -q "Invalid GRES specification (with and without type identification)" "$dir/forge-summary" \
  && grep -q "'Unspecified error'" "$dir/forge-summary" && ok "forged rejections carry the documented Slurm error codes (GRES, GRES type, unspecified)" \
  || fail "forged rejection codes" "$(grep texts "$dir/forge-summary")"

# A hung salloc/srun of an accepted job whose run overlapped the restart window is Slurm's
# step teardown across the restart (stepfail); any other hang fails.
cat "$dir"/w.* | awk -v d="$down_at" -v u="$up_at" \
  '$4 == "hung" && ($1 == "salloc" || $1 == "srun") && index("|" $3 "|", "|stepfail|") && $5 <= u + 5 && $6 >= d {$4 = "stepfail"; $7 = "restart"} {print}' \
  > "$dir/clients"
hung_across_restart=$(awk '$7 == "restart"' "$dir/clients" | wc -l)
clients_sent=$(wc -l < "$dir/clients")
clients_expected=$((2 * sbatch_per_worker + 2 * ${STORM_OTHER:-40}))
mism=$(awk '$4 != "conn" && $4 != "inflight" && index("|" $3 "|", "|" $4 "|") == 0' "$dir/clients")
hung=$(awk '$4 == "hung" || $4 == "other"' "$dir/clients" | wc -l)
for cls in ok stepfail rej spank conn inflight; do eval "c_$cls=$(awk -v c=$cls '$4 == c' "$dir/clients" | wc -l)"; done
summary_clients=$(awk '{n[$1" "$4]++} END {for (k in n) printf "%s=%d ", k, n[k]}' "$dir/clients")
[[ $clients_sent -eq $clients_expected && -z $mism && $hung -eq 0 && $((c_ok + c_stepfail + c_rej + c_spank + c_conn + c_inflight)) -eq $clients_sent ]] \
  && ok "sbatch/salloc/srun: $clients_sent sent = $c_ok accepted + $c_stepfail accepted then step failed ($hung_across_restart of them killed after hanging across the restart) + $c_rej rejected by slurmctld + $c_spank refused by SPANK + $c_conn connection errors + $c_inflight in flight ($summary_clients)" \
  || fail "client submissions" "sent=$clients_sent of $clients_expected hung/other=$hung" "$(head -5 <<<"$mism")" "$(head -5 "$dir/odd.log" 2>/dev/null)"

# Audited decisions expected: every annotated submission slurmctld decided.
read -r ca_acc ca_rej ca_res < <(awk '$4 == "rej" {r++; next}
  ($4 != "ok" && $4 != "stepfail") || ($1 == "sbatch" && $2 == 9) {next}
  $1 == "sbatch" && $2 == 2 {z++; next}
  {a++}
  END {print a+0, r+0, z+0}' "$dir/clients")
exp_acc=$((fa_acc + ca_acc)); exp_rej=$((fa_rej + ca_rej)); exp_res=$((fa_res + ca_res))
exp_total=$((exp_acc + exp_rej + exp_res))
inflight=$((f_inflight + c_inflight))  # may have been decided (and audited) before the stop, or not

# ---- The audit log: one intact JSON line per audited decision ----
/usr/bin/python3 - "$dir/audit.jsonl" "$pre_lines" "$min64" > "$dir/audit-summary" <<'PY'
import sys, json, collections
path, skip, min64 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
lines = data.split(b"\n")
torn = 0 if data.endswith(b"\n") else 1
lines = lines[:-1] if data.endswith(b"\n") else lines
acts = collections.Counter(); bad = 0; ids = collections.Counter(); wrong_resize = 0
for i, l in enumerate(lines):
    try:
        r = json.loads(l)
    except Exception:
        bad += 1; continue
    ids[r["decision_id"]] += 1
    if i < skip: continue
    acts[r["action"]] += 1
    if r["action"] == "resize" and r["resized_to"] != min64: wrong_resize += 1
dups = sum(1 for k, n in ids.items() if n > 1)
print(len(lines) - skip, acts["accept"], acts["reject"], acts["resize"], bad, torn, dups, wrong_resize, sum(acts.values()) - acts["accept"] - acts["reject"] - acts["resize"])
PY
read -r a_total a_acc a_rej a_res a_bad a_torn a_dups a_wrongres a_other < "$dir/audit-summary"
[[ $a_bad -eq 0 && $a_torn -eq 0 && $a_dups -eq 0 ]] && ok "audit log: every line parses as JSON, none torn, no decision id twice" \
  || fail "audit log intact" "bad=$a_bad torn=$a_torn duplicate ids=$a_dups"
within() { [[ $1 -ge $2 && $1 -le $(($2 + inflight)) ]]; }
within "$a_total" "$exp_total" && within "$a_acc" "$exp_acc" && within "$a_rej" "$exp_rej" && within "$a_res" "$exp_res" && [[ $a_other -eq 0 ]] \
  && ok "audit log: $a_total storm lines for $exp_total decisions returned to clients (+ $((a_total - exp_total)) of $inflight requests in flight at the stop): accept $a_acc, reject $a_rej, resize $a_res" \
  || fail "audit counts" "audit: total=$a_total accept=$a_acc reject=$a_rej resize=$a_res other=$a_other" \
                         "expected: total=$exp_total accept=$exp_acc reject=$exp_rej resize=$exp_res (+ up to $inflight in flight)"
[[ $a_wrongres -eq 0 && $a_res -gt 0 ]] && ok "every resize in the storm is to the CLI's min_gpus_to_fit ($min64)" || fail "resize targets" "$a_wrongres wrong"

# ---- Jobs decided before the restart keep their verdict ----
[[ $(scontrol show job "$keep_ok" | grep AdminComment) == "$keep_ok_line" && $(scontrol show job "$keep_rs" | grep AdminComment) == "$keep_rs_line" ]] &&
  id1=$(grep -o 'decision [^ ;]*' <<<"$keep_rs_line" | awk '{print $2}') &&
  [[ -n $id1 && $(grep -c "\"decision_id\":\"$id1\",.*\"action\":\"resize\"" "$dir/audit.jsonl") -eq 1 ]] \
  && ok "jobs decided before the restart keep their AdminComment verdict; the decision id finds one audit line" \
  || fail "verdict across the restart" "$keep_ok_line" "$(scontrol show job "$keep_ok" | grep AdminComment)" "$keep_rs_line"
scontrol cancel "$keep_ok" "$keep_rs" 2>/dev/null

# ---- Memory ----
growth1=$(( (rss_mid - rss0) / 1024 )); growth2=$(( (rss_end - rss_start2) / 1024 ))
[[ $growth1 -lt 64 && $growth2 -lt 64 ]] && ok "slurmctld VmRSS bounded: first process $((rss0 / 1024)) -> $((rss_mid / 1024)) MiB, after the restart $((rss_start2 / 1024)) -> $((rss_end / 1024)) MiB" \
  || fail "slurmctld RSS" "$rss0 -> $rss_mid kB; $rss_start2 -> $rss_end kB"
grep -q "job_submit/trainfit: internal" "$dir/log/slurmctld.log" && fail "internal errors in slurmctld's log" "$(grep -m3 'job_submit/trainfit: internal' "$dir/log/slurmctld.log")"

sent=$((total_forge + clients_sent))
secs=$(awk "BEGIN{printf \"%.1f\", $end-$start}")
rate=$(awk "BEGIN{printf \"%.0f\", $sent/($end-$start)}")
echo "STORM SUMMARY: $sent submissions in $secs s ($rate/s; 4 forged-env libslurm clients, 2 sbatch, 1 salloc, 1 srun): accepted $((f_ok + c_ok + c_stepfail)), rejected by slurmctld $((f_rej + c_rej)), refused by SPANK $c_spank, connection errors during the $(awk "BEGIN{printf \"%.0f\", $up_at-$down_at}") s restart window $((f_conn + c_conn)) (+ $inflight in flight at the stop), none lost/hung; audit lines $a_total = $exp_total decided + $((a_total - exp_total)) in flight (accept $a_acc, reject $a_rej, resize $a_res), torn 0; slurmctld RSS $((rss0 / 1024))->$((rss_mid / 1024)) MiB (pid1), $((rss_start2 / 1024))->$((rss_end / 1024)) MiB (pid2)"
[[ $failures -eq 0 ]]
