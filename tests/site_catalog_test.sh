#!/bin/bash
# Site catalogs through the CLI (docs/site.md): --catalog-dir, $TRAINFIT_CATALOG_DIR,
# what a site GPU or model changes in `trainfit estimate`, and errors with file:line.
# Expected numbers come from the files written here.
# usage: site_catalog_test.sh TRAINFIT
set -u
T=$1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', expected '$3'"; fi; }
contains() { if grep -qF -- "$3" <<<"$2"; then ok "$1"; else bad "$1: '$3' not in: $2"; fi; }

mkdir -p "$W/site/gpus.d" "$W/site/models.d"
A40=48305799168 V100=34359738368 NVL=100663296000
cat >"$W/site/gpus.d/10-site.json" <<EOF
{
  "_comment": "site GPUs: nvidia-smi memory.total in MiB x 1048576",
  "gpus": [
    {"name": "a40", "description": "NVIDIA A40 48 GB", "capacity_bytes": $A40,
     "device_names": ["NVIDIA A40"]},
    {"name": "v100-32gb", "aliases": ["v100"], "capacity_bytes": $V100},
    {"name": "h100-nvl", "capacity_bytes": $NVL, "device_names": ["NVIDIA H100 NVL"]}
  ]
}
EOF
cat >"$W/site/models.d/10-acme.json" <<'EOF'
{"models": [
  {"name": "acme-13b", "aliases": ["acme13"], "layers": 40, "hidden": 5120, "heads": 40, "kv_heads": 8,
   "ffn": 13824, "vocab": 64000}
]}
EOF
gib() { awk -v b="$1" 'BEGIN { printf "%.4f", b / 1073741824 }'; }
capacity() { "$@" --format json 2>/dev/null | sed -n 's/^ *"capacity_gb": \([0-9.]*\).*/\1/p' | head -1 | awk '{ printf "%.4f", $1 }'; }

# Without the site catalogs: unknown.
"$T" estimate --catalog-dir "$W/empty-but-absent" --model llama3-8b --gpus 8 >/dev/null 2>"$W/err"
check "a named --catalog-dir that does not exist is an error (exit 2)" "$?" 2
contains "... saying so" "$(cat "$W/err")" "catalog-dir='$W/empty-but-absent': not found"
mkdir "$W/none"
TRAINFIT_CATALOG_DIR="$W/none" "$T" estimate --gpu a40 --model llama3-8b --gpus 8 >/dev/null 2>"$W/err"
check "without site catalogs a40 is unknown" "$?" 2
contains "... with the catalog error" "$(cat "$W/err")" "gpu='a40' is not in the catalog"

# Each site GPU's capacity reaches the estimate.
for case in "a40 $A40" "v100 $V100" "NVIDIA H100 NVL $NVL" "nvidia_h100_nvl $NVL"; do
  bytes=${case##* } name=${case% *}
  got=$(capacity "$T" estimate --catalog-dir "$W/site" --model llama3-8b --gpus 8 --zero 3 --gpu "$name")
  check "--gpu '$name' capacity_gb from the file" "$got" "$(gib "$bytes")"
done
got=$(TRAINFIT_CATALOG_DIR="$W/site" capacity "$T" estimate --model llama3-8b --gpus 8 --gpu a40)
check "TRAINFIT_CATALOG_DIR works like --catalog-dir" "$got" "$(gib $A40)"
got=$(capacity "$T" --catalog-dir="$W/site" estimate --model llama3-8b --gpus 8 --gpu a40)
check "--catalog-dir=DIR before the command" "$got" "$(gib $A40)"

# A site model: accepted by --model, with its geometry (parameters from the file's numbers).
"$T" estimate --model acme-13b --gpus 8 --catalog-dir /nonexistent >/dev/null 2>&1
check "acme-13b unknown without the catalog" "$?" 2
out=$("$T" estimate --catalog-dir "$W/site" --model acme13 --gpus 8 --zero 3 --gpu a40 --format json 2>&1)
rc=$?
check "acme13 (alias) accepted (exit 0 fits or 1 does not fit, not 2)" "$((rc < 2))" 1
# Llama-style parameter count from the file: embeddings + head (untied) + per layer
# (q,o: h*h; k,v: h*kv*hd; MLP 3*h*ffn; two norms) + final norm.
expected=$(awk 'BEGIN { L=40; h=5120; nh=40; kv=8; f=13824; V=64000; hd=h/nh;
  printf "%.0f", 2*V*h + L*(2*h*h + 2*h*kv*hd + 3*h*f + 2*h) + h }')
contains "acme-13b's parameter count from its geometry" "$out" "\"total\": $expected,"
"$T" models --catalog-dir "$W/site" 2>/dev/null | grep -q '^acme-13b'
check "trainfit models lists it" "$?" 0
notes=$("$T" gpus --catalog-dir "$W/site" 2>&1 >/dev/null)
contains "trainfit gpus notes what was added" "$notes" "$W/site/gpus.d/10-site.json:4: gpu 'a40' added"

# Override: a later file replaces the earlier and the built-in entry; a note says so.
cat >"$W/site/gpus.d/20-override.json" <<'EOF'
{"gpus": [
  {"name": "a40", "capacity_bytes": 42949672960},
  {"name": "h100", "aliases": ["h100-sxm"], "capacity_bytes": 80000000000}
]}
EOF
got=$(capacity "$T" estimate --catalog-dir "$W/site" --model llama3-8b --gpus 8 --gpu a40)
check "20-override.json overrides 10-site.json" "$got" "$(gib 42949672960)"
got=$(capacity "$T" estimate --catalog-dir "$W/site" --model llama3-8b --gpus 8 --gpu h100-sxm)
check "the site h100 overrides the built-in one" "$got" "$(gib 80000000000)"
notes=$("$T" gpus --catalog-dir "$W/site" 2>&1 >/dev/null)
contains "note: which overrode what" "$notes" "$W/site/gpus.d/20-override.json:2: gpu 'a40' overrides the entry at $W/site/gpus.d/10-site.json:4"
contains "note: the built-in h100" "$notes" "$W/site/gpus.d/20-override.json:3: gpu 'h100' overrides the built-in entry"
rm "$W/site/gpus.d/20-override.json"

# The service: `trainfit serve --catalog-dir` answers with the site GPU's capacity.
if command -v curl >/dev/null; then
  timeout -k 30 60 "$T" serve --catalog-dir "$W/site" --listen 127.0.0.1:0 2>"$W/serve.err" &
  serve_pid=$!
  port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$W/serve.err")
    [ -n "$port" ] && break
    sleep 0.1
  done
  body=$(curl -s -X POST "127.0.0.1:$port/edge/training" -H 'Content-Type: application/json' \
    -d '{"model":"acme-13b","gpu":"a40","num_gpus":8,"zero_stage":3}')
  got=$(sed -n 's/.*"capacity_gb": *\([0-9.]*\).*/\1/p' <<<"$body" | head -1 | awk '{ printf "%.4f", $1 }')
  check "serve --catalog-dir: the site model and GPU over HTTP" "$got" "$(gib $A40)"
  contains "serve notes the site entries at start" "$(cat "$W/serve.err")" "gpu 'a40' added"

  # SIGHUP: a GPU added since the start is served (estimate and /v1/gpus) once reloaded.
  L40=51527024640
  chmod a+rx "$W"  # as root, serve reads them again as the user it dropped to (--user)
  server=$(pgrep -P "$serve_pid" | head -1)  # trainfit itself: timeout ends on a HUP of its own
  hup_and_wait() {  # hup_and_wait TEXT: SIGHUP, then wait for TEXT in the service's log
    kill -HUP "$server"
    for _ in $(seq 100); do grep -qF "$1" "$W/serve.err" && return 0; sleep 0.05; done
    return 1
  }
  ask_gpu() { curl -s -X POST "127.0.0.1:$port/edge/training" -H 'Content-Type: application/json' \
                -d "{\"model\":\"acme-13b\",\"gpu\":\"$1\",\"num_gpus\":8,\"zero_stage\":3}"; }
  echo '{"gpus": [{"name": "l40-site", "capacity_bytes": '$L40'}]}' >"$W/site/gpus.d/40-hup.json"
  code=$(ask_gpu l40-site | sed -n 's/.*"field": *"\([a-z_]*\)".*/\1/p' | head -1)
  check "before SIGHUP: a GPU added to gpus.d is unknown to the running service" "$code" "gpu"
  hup_and_wait "site catalogs reloaded"
  check "SIGHUP: the service says it reloaded" "$?" 0
  got=$(ask_gpu l40-site | sed -n 's/.*"capacity_gb": *\([0-9.]*\).*/\1/p' | head -1 | awk '{ printf "%.4f", $1 }')
  check "after SIGHUP: the added GPU's capacity answers" "$got" "$(gib $L40)"
  contains "after SIGHUP: GET /v1/gpus lists it" "$(curl -s "127.0.0.1:$port/v1/gpus")" '"l40-site"'
  # An invalid set is reported with file:line and not installed: the service keeps the last good one.
  echo '{"gpus": [{"name": "broken", "capacity_bytes": "16GB"}]}' >"$W/site/gpus.d/50-bad.json"
  hup_and_wait "site catalogs not reloaded"
  check "SIGHUP with a bad file: not reloaded" "$?" 0
  contains "SIGHUP with a bad file: file:line in the log" "$(cat "$W/serve.err")" "$W/site/gpus.d/50-bad.json:1:"
  got=$(ask_gpu l40-site | sed -n 's/.*"capacity_gb": *\([0-9.]*\).*/\1/p' | head -1 | awk '{ printf "%.4f", $1 }')
  check "SIGHUP with a bad file: the last good catalog still answers" "$got" "$(gib $L40)"
  rm -f "$W/site/gpus.d/40-hup.json" "$W/site/gpus.d/50-bad.json"
  kill "$serve_pid" 2>/dev/null
  wait "$serve_pid" 2>/dev/null
  check "SIGTERM after reloads: clean exit" "$?" 0
fi

# A bad file: exact file:line, field, value, accepted; exit 2; nothing half-applied.
cat >"$W/site/gpus.d/30-bad.json" <<'EOF'
{"gpus": [
  {"name": "l40s", "capacity_bytes": 48305799168},
  {"name": "t4",
   "capacity_bytes": "16GB"}
]}
EOF
"$T" estimate --catalog-dir "$W/site" --model llama3-8b --gpus 8 --gpu a40 >/dev/null 2>"$W/err"
check "a bad site file stops the CLI (exit 2)" "$?" 2
contains "... naming file:line, field, value and accepted" "$(cat "$W/err")" \
  "trainfit: $W/site/gpus.d/30-bad.json:4: gpus[1] 't4': capacity_bytes='16GB' is not valid; accepted: bytes"

# check-config: the same problem, and trainfit.conf's problems, all of them.
cat >"$W/trainfit.conf" <<'EOF'
# a site's policy
action = resise
headroom = 0.1
default_gpu = a40
gpus_per_node = 0
gpu_alias.ampere48 = a40
partition.big.actoin = warn
EOF
out=$("$T" check-config --catalog-dir "$W/site" "$W/trainfit.conf" 2>/dev/null)
check "check-config exit 2 on problems" "$?" 2
contains "check-config: the catalog problem" "$out" "$W/site/gpus.d/30-bad.json:4: gpus[1] 't4': capacity_bytes='16GB'"
contains "check-config: line 2" "$out" "$W/trainfit.conf:2: action='resise' is not valid; accepted: reject|resize|warn"
contains "check-config: line 5 too (not only the first)" "$out" "$W/trainfit.conf:5: gpus_per_node='0' is not valid"
contains "check-config: line 7 too" "$out" "$W/trainfit.conf:7: unknown partition key 'actoin'"
# default_gpu and gpu_alias name a40, which the invalid site catalog would have added:
# the plugin would use the built-in catalogs, so those lines are problems too.
contains "check-config: line 4 (a40 not in the catalog in force)" "$out" "$W/trainfit.conf:4: default_gpu: gpu='a40' is not in the catalog"
check "check-config: 6 problems, one line each" "$(wc -l <<<"$out")" 6
rm "$W/site/gpus.d/30-bad.json"
printf 'action = resize\ndefault_gpu = a40\ngpu_alias.ampere48 = a40\npartition.big.action = warn\n' >"$W/trainfit.conf"
out=$("$T" check-config --catalog-dir "$W/site" "$W/trainfit.conf" 2>/dev/null)
check "check-config exit 0 when clean" "$?" 0
check "... one summary line" "$(wc -l <<<"$out")" 1
contains "... naming the file" "$out" "$W/trainfit.conf: ok: 1 partition override, 1 GPU alias"
"$T" check-config --catalog-dir /nonexistent-site "$W/trainfit.conf" >/dev/null 2>&1
check "check-config: default_gpu = a40 fails without the site catalog" "$?" 2
"$T" check-config "$W/absent.conf" --catalog-dir "$W/site" >"$W/out" 2>/dev/null
check "check-config: a missing file is a problem" "$?" 2
contains "... said" "$(cat "$W/out")" "$W/absent.conf: not found"

# check-config against slurm.conf (--slurm-conf): the default partition, the nodes' GPUs,
# AccountingStorageEnforce. The slurm.conf texts are written here; what each says is counted by hand.
cat >"$W/slurm.conf" <<'EOF'
NodeName=a[1-4] Gres=gpu:a100-40gb:8
NodeName=h[1-2] Gres=gpu:h100:8
PartitionName=strict Nodes=h[1-2] Default=YES
PartitionName=aonly Nodes=a[1-4]
PartitionName=gpu Nodes=h[1-2]
EOF
printf 'default_partition = gpu\npartition.strict.require_annotation = true\n' >"$W/trainfit.conf"
out=$("$T" check-config --slurm-conf "$W/slurm.conf" "$W/trainfit.conf" 2>/dev/null)
check "check-config: a default_partition other than slurm.conf's Default=YES is a problem (exit 2)" "$?" 2
contains "... naming both" "$out" "$W/trainfit.conf: default_partition: 'gpu' but slurm.conf's default partition (Default=YES) is 'strict'"
contains "... and default_gpu = h100 where aonly has only A100 40GB" "$out" "default_gpu: 'h100' is a GPU none of partition aonly's nodes has (slurm.conf: a100-40gb)"
check "... two problems, one line each" "$(wc -l <<<"$out")" 2
printf 'partition.strict.require_annotation = true\npartition.aonly.default_gpu = a100-40gb\nexempt_accounts = ops\n' >"$W/trainfit.conf"
out=$("$T" check-config --slurm-conf "$W/slurm.conf" "$W/trainfit.conf" 2>/dev/null)
check "check-config: exempt_accounts without AccountingStorageEnforce is a warning (exit 0)" "$?" 0
contains "... said" "$out" "$W/trainfit.conf: warning: exempt_accounts: slurm.conf's AccountingStorageEnforce is not set: Slurm does not check a job's account"
contains "... and the summary counts it" "$out" "$W/trainfit.conf: ok with 1 warning: 2 partition overrides"
printf 'AccountingStorageEnforce=limits\n' >>"$W/slurm.conf"
out=$("$T" check-config --slurm-conf "$W/slurm.conf" "$W/trainfit.conf" 2>/dev/null)
check "check-config: with AccountingStorageEnforce=limits (it implies associations): exit 0" "$?" 0
check "... and no warning: one summary line" "$(wc -l <<<"$out")" 1
contains "... saying ok" "$out" "$W/trainfit.conf: ok: 2 partition overrides"
# A partition named in another case than slurm.conf's: the problem names its line (line 3 here).
printf 'action = reject\npartition.strict.require_annotation = true\npartition.Gpu.action = warn\n' >"$W/trainfit.conf"
out=$("$T" check-config --slurm-conf "$W/slurm.conf" "$W/trainfit.conf" 2>/dev/null)
check "check-config: partition.Gpu where slurm.conf has gpu is a problem (exit 2)" "$?" 2
contains "... on its line, FILE:3:" "$out" "$W/trainfit.conf:3: partition.Gpu: slurm.conf has no partition 'Gpu'; Slurm matches partition names case-sensitively: did you mean 'gpu'?"

# check-config counts the audited jobs whose likely range held the usable HBM, and what this file
# does to them. Four records, counted by hand: (1) a range wholly below the capacity, (2) one
# holding it with the point figure below it, (3) one holding it with the point above it, (4) an
# exempt record (not a check). Under refuse_when = certain both band jobs are warned; under
# likely, (3) is refused.
record() {  # record ACTION PREDICTED LOW HIGH CAPACITY
  printf '{"time":"2026-12-07T10:00:00Z","event":"submit","decision_id":"t-%s","job_id":"","uid":1000,"user":"u","account":"","partition":"","qos":"","job_name":"j","gpu_request":"tres_per_job=gres:gpu:h100:8","annotation":"model=llama3-8b","gpus_requested":8,"gpu":"h100","predicted_per_gpu_gb":%s,"capacity_gb":%s,"likely_low_gb":%s,"likely_high_gb":%s,"action":"%s","reason":"","min_gpus_to_fit":null,"min_gpus_bound":"likely_high","resized_to":null,"time_limit_min":null,"advice":[],"host_ram_per_node_gb":null,"mem_per_node_gb":null,"message":"","gpus_held":8}\n' \
    "$RANDOM" "$2" "$5" "$3" "$4" "$1"
}
{ record accept 40 30 50 79.6; record warn 70 55 90 79.6; record warn 85 66 110 79.6; record exempt 85 66 110 79.6; } >"$W/audit.jsonl"
for when in certain likely; do
  printf 'refuse_when = %s\naudit_log = %s\n' "$when" "$W/audit.jsonl" >"$W/trainfit.conf"
  err=$("$T" check-config --catalog-dir "$W/site" "$W/trainfit.conf" 2>&1 >/dev/null)
  refused=$([ "$when" = likely ] && echo 1 || echo 0)
  contains "check-config, refuse_when = $when: the audit log's band counted" "$err" \
    "$W/audit.jsonl: 3 checked jobs with a likely range, 2 in the uncertain band (likely range straddling the usable HBM): this file refuses $refused and warns $((2 - refused)) of them"
done
err=$("$T" check-config --catalog-dir "$W/site" --quiet "$W/trainfit.conf" 2>&1 >/dev/null)
check "check-config --quiet: no band note" "$err" ""

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
