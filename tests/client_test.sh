#!/usr/bin/env bash
# Black-box tests of `trainfit estimate --endpoint` (docs/service.md, "The client"): real
# `trainfit serve` processes, a real TLS terminator (haproxy) with a CA made here by
# openssl, and Python sockets that refuse, never accept, or never answer. Expected output
# is the local run's; that the service answered is read from its access log.
set -u
bin=$1
tmp=$(mktemp -d)
failures=0
pass=0
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

fail() { echo "FAIL $1"; failures=$((failures + 1)); }
ok() { pass=$((pass + 1)); }
check() { if eval "$1"; then ok; else fail "$2"; fi; }
py() { timeout 60 /usr/bin/python3 "$@"; }
now_ms() { date +%s%3N; }
free_port() { py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
posts() { local n; n=$(grep -c '"method":"POST"' "$tmp/access.log" 2>/dev/null); echo "${n:-0}"; }

# The service, on a free port, named node-a.
timeout -k 5 300 "$bin" serve --listen 127.0.0.1:0 --node-name node-a --threads 4 --access-log "$tmp/access.log" \
  2>"$tmp/server.err" &
pids+=($!)
for _ in $(seq 100); do
  port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/server.err")
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { echo "FAIL server did not start:"; cat "$tmp/server.err"; exit 1; }
live=http://127.0.0.1:$port
answered="answered by $live/edge/training (serving_node node-a)"

# The seed's example request, as committed in tests/fixtures.
cp "$(dirname "$0")/fixtures/seed_request.json" "$tmp/seed.json"

# run NAME ARGS...: stdout, stderr and exit code in $tmp/NAME.{out,err,rc}.
run() {
  local name=$1
  shift
  timeout 30 "$bin" estimate "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
}
# Timeouts for runs that expect an answer or a certificate failure, not a timeout: the
# sanitizer build shares two cores with other tests, and a TLS handshake can pass the
# 500 ms connect default there.
roomy=(--connect-timeout-ms 10000 --timeout-ms 20000)
# Output without what only a remote answer has: the answering line, serving_node, compute_ms.
comparable() { grep -vE '^answered by |^  "(serving_node|compute_ms)":' "$1"; }

# same_as_local NAME ARGS...: the answer through the endpoint equals the local run.
same_as_local() {
  local name=$1
  shift
  run "$name.local" "$@"
  local before
  before=$(posts)
  run "$name" "$@" --endpoint "$live" "${roomy[@]}"
  [[ $(posts) == $((before + 1)) ]] && ok || fail "$name: the service got no POST (access log: $before -> $(posts))"
  diff <(comparable "$tmp/$name.local.out") <(comparable "$tmp/$name.out") >"$tmp/$name.diff" && ok ||
    { fail "$name: output differs from the local run:"; head -20 "$tmp/$name.diff"; }
  [[ $(cat "$tmp/$name.rc") == $(cat "$tmp/$name.local.rc") ]] && ok || fail "$name: exit code $(cat "$tmp/$name.rc"), local $(cat "$tmp/$name.local.rc")"
  grep -qxF "trainfit: $answered" "$tmp/$name.err" && ok || fail "$name: stderr does not say who answered: $(cat "$tmp/$name.err")"
}

# 1. Several requests, every format, equal to the local run.
oom=(--model llama3-70b --gpus 8 --gpu h100 --seq 8192 --zero 3)
for format in table json csv; do
  same_as_local "seed_$format" --request "$tmp/seed.json" --format "$format"
  same_as_local "titan_$format" --model llama3-8b --gpus 8 --gpu h100 --framework torchtitan --seq 8192 --format "$format"
  same_as_local "oom_$format" "${oom[@]}" --format "$format"
done
check '[[ $(cat $tmp/oom_table.local.rc) == 1 ]] && grep -q "^advice" $tmp/oom_table.local.out' "the OOM case fits or has no advice locally"
check '[[ $(head -1 $tmp/seed_table.out) == "$answered" ]]' "table: no 'answered by' line: $(head -1 "$tmp/seed_table.out")"
check 'grep -q "\"serving_node\": \"node-a\"" $tmp/seed_json.out' "json: serving_node is not node-a"

# 2. An error answered by the service: the local line and exit code.
run bad.local --model llama3-8b --gpus 8 --tp 3
run bad --model llama3-8b --gpus 8 --tp 3 --endpoint "$live" "${roomy[@]}"
check '[[ $(cat $tmp/bad.rc) == 2 && $(cat $tmp/bad.local.rc) == 2 ]]' "error: exit codes $(cat "$tmp/bad.rc") / $(cat "$tmp/bad.local.rc")"
check 'diff -q $tmp/bad.err $tmp/bad.local.err >/dev/null' "error: '$(cat "$tmp/bad.err")' vs local '$(cat "$tmp/bad.local.err")'"
check 'grep -q "\"status\":400" $tmp/access.log' "error: the service logged no 400"

# 3. Failover: a closed port, a listener that never accepts (connect timeout), one that
# accepts and never answers (total timeout); then the live service answers, saying so.
closed=$(free_port)
cat >"$tmp/holes.py" <<'PY'
import socket, sys, time
# backlog 0 and two connections queued: the kernel drops further SYNs (connect hangs).
full = socket.socket(); full.bind(("127.0.0.1", 0)); full.listen(0)
fillers = []
for _ in range(3):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(full.getsockname())
    except BlockingIOError: pass
    fillers.append(c)
mute = socket.socket(); mute.bind(("127.0.0.1", 0)); mute.listen(16)
print(full.getsockname()[1], mute.getsockname()[1], flush=True)
held = []
mute.settimeout(0.2)
end = time.time() + 120
while time.time() < end:
    try: held.append(mute.accept()[0])
    except socket.timeout: pass
PY
py "$tmp/holes.py" >"$tmp/holes.ports" &
pids+=($!)
for _ in $(seq 50); do [[ -s $tmp/holes.ports ]] && break; sleep 0.1; done
read -r blackhole mute <"$tmp/holes.ports"
run failover_closed "${oom[@]}" --endpoint "http://127.0.0.1:$closed,$live" "${roomy[@]}"
check 'grep -qF "$answered after http://127.0.0.1:$closed/edge/training (connection failed" $tmp/failover_closed.err' \
  "closed port: $(cat "$tmp/failover_closed.err")"
check 'diff -q <(comparable $tmp/failover_closed.out) <(comparable $tmp/oom_table.local.out) >/dev/null' "closed port: output differs"
# The time a timeout adds is read against the same run with the live endpoint alone, just
# before: under ASan on two shared cores that run alone takes about a second.
start=$(now_ms)
run failover_base "${oom[@]}" --endpoint "$live" "${roomy[@]}"
base=$(($(now_ms) - start))
start=$(now_ms)
run failover_blackhole "${oom[@]}" --endpoint "http://127.0.0.1:$blackhole,$live" --connect-timeout-ms 300
elapsed=$(($(now_ms) - start))
check 'grep -qF "$answered after http://127.0.0.1:$blackhole/edge/training (timed out" $tmp/failover_blackhole.err' \
  "black hole: $(cat "$tmp/failover_blackhole.err")"
check '((elapsed >= 300 && elapsed - base < 1300))' "black hole: took $elapsed ms with a 300 ms connect timeout ($base ms without it)"
start=$(now_ms)
run failover_mute "${oom[@]}" --endpoint "http://127.0.0.1:$mute,$live" --timeout-ms 700
elapsed=$(($(now_ms) - start))
check 'grep -qF "$answered after http://127.0.0.1:$mute/edge/training (timed out" $tmp/failover_mute.err' \
  "mute: $(cat "$tmp/failover_mute.err")"
check '((elapsed >= 700 && elapsed - base < 1700))' "mute: took $elapsed ms with a 700 ms timeout ($base ms without it)"

# 4. Every endpoint down: computed locally (the default), or refused.
down="http://127.0.0.1:$closed,http://127.0.0.1:$blackhole"
start=$(now_ms)
run down_local "${oom[@]}" --endpoint "$down"
elapsed=$(($(now_ms) - start))
check 'diff -q $tmp/down_local.out $tmp/oom_table.local.out >/dev/null && [[ $(cat $tmp/down_local.rc) == 1 ]]' "down: not the local output"
check 'grep -q "^trainfit: no endpoint answered: http://127.0.0.1:$closed/edge/training (connection failed.*), http://127.0.0.1:$blackhole/edge/training (timed out.*); computed locally$" $tmp/down_local.err' \
  "down: $(cat "$tmp/down_local.err")"
check '((elapsed - base < 2500))' "down: the default timeouts took $elapsed ms ($base ms without them)"
run down_refuse "${oom[@]}" --endpoint "$down" --endpoint-fallback refuse --connect-timeout-ms 200
check '[[ $(cat $tmp/down_refuse.rc) == 3 && ! -s $tmp/down_refuse.out ]]' "refuse: exit $(cat "$tmp/down_refuse.rc")"
check 'grep -q "^trainfit: no endpoint answered: .*; refused (--endpoint-fallback=refuse)$" $tmp/down_refuse.err' "refuse: $(cat "$tmp/down_refuse.err")"

# 5. An answer over the size cap (4 MiB) is cut off: that endpoint failed.
cat >"$tmp/big.py" <<'PY'
import http.server, sys
class Big(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        try: self.wfile.write(b"[" + b"0," * (3 << 20) + b"0]")
        except OSError: pass
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), Big)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
py "$tmp/big.py" >"$tmp/big.port" &
pids+=($!)
for _ in $(seq 50); do [[ -s $tmp/big.port ]] && break; sleep 0.1; done
run big "${oom[@]}" --endpoint "http://127.0.0.1:$(cat "$tmp/big.port")"
check 'grep -q "(answer over 4194304 bytes, transfer aborted); computed locally" $tmp/big.err' "size cap: $(cat "$tmp/big.err")"

# 5b. A hostile endpoint's 400 carries a 200 KiB error message with a line break in it: the
# user sees one line, cut at 1024 bytes, with the message's size; no forged second line.
py "$(dirname "$0")/endpoint_long_error.py" 204800 >"$tmp/long.port" &
pids+=($!)
for _ in $(seq 50); do [[ -s $tmp/long.port ]] && break; sleep 0.1; done
run long "${oom[@]}" --endpoint "http://127.0.0.1:$(cat "$tmp/long.port")"
check '[[ $(cat $tmp/long.rc) == 2 && $(wc -l <$tmp/long.err) == 1 && $(wc -c <$tmp/long.err) -lt 1200 ]] &&
       grep -q "^trainfit: eeee*\.\.\. \[cut: 204800 bytes\]$" $tmp/long.err' \
  "long error: rc $(cat "$tmp/long.rc"), $(wc -l <"$tmp/long.err") lines, $(wc -c <"$tmp/long.err") bytes: $(head -c 300 "$tmp/long.err")"

# 6. TLS through haproxy, with a CA made here: verified with --cacert, refused without.
cd "$tmp"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=trainfit test CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.ext 2>/dev/null
cat server.crt server.key >server.pem
cd - >/dev/null
tls_port=$(free_port)
cat >"$tmp/haproxy.cfg" <<CFG
global
  maxconn 64
defaults
  mode http
  timeout connect 2s
  timeout client 5s
  timeout server 5s
frontend tls
  bind 127.0.0.1:$tls_port ssl crt $tmp/server.pem
  default_backend trainfit
backend trainfit
  server node-a 127.0.0.1:$port
CFG
timeout -k 5 200 haproxy -db -f "$tmp/haproxy.cfg" >"$tmp/haproxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do py -c "import socket,sys; socket.create_connection(('127.0.0.1',$tls_port),0.2)" 2>/dev/null && break; sleep 0.1; done
tls=https://127.0.0.1:$tls_port
run tls_ok "${oom[@]}" --format json --endpoint "$tls" --cacert "$tmp/ca.pem" "${roomy[@]}"
check 'grep -qxF "trainfit: answered by $tls/edge/training (serving_node node-a)" $tmp/tls_ok.err' "tls: $(cat "$tmp/tls_ok.err"; head -3 "$tmp/haproxy.log")"
check 'diff -q <(comparable $tmp/tls_ok.out) <(comparable $tmp/oom_json.local.out) >/dev/null' "tls: output differs"
run tls_unverified "${oom[@]}" --endpoint "$tls" "${roomy[@]}"
check 'grep -q "^trainfit: no endpoint answered: $tls/edge/training (certificate not verified: .*); computed locally$" $tmp/tls_unverified.err' \
  "tls without --cacert: $(cat "$tmp/tls_unverified.err")"
check 'diff -q $tmp/tls_unverified.out $tmp/oom_table.local.out >/dev/null' "tls without --cacert: not the local output"
run tls_refuse "${oom[@]}" --endpoint "$tls" --endpoint-fallback refuse "${roomy[@]}"
check '[[ $(cat $tmp/tls_refuse.rc) == 3 ]] && grep -q "certificate not verified.*refused" $tmp/tls_refuse.err' "tls refuse: $(cat "$tmp/tls_refuse.err")"

# 7. Bad values: one line each, naming the option, the value and what is accepted.
bad_value() {
  local want=$1
  shift
  run badopt "${oom[@]}" "$@"
  if [[ $(cat "$tmp/badopt.rc") == 2 && $(wc -l <"$tmp/badopt.err") == 1 && $(cat "$tmp/badopt.err") == "trainfit: $want" ]]; then ok
  else fail "bad value $*: rc $(cat "$tmp/badopt.rc"): $(cat "$tmp/badopt.err")"; fi
}
urls="accepted: one or more http:// or https:// URLs, comma-separated"
ms="accepted: integer milliseconds from 1 to 60000"
bad_value "endpoint='ftp://x' is not valid; $urls" --endpoint ftp://x
bad_value "endpoint='' is not valid; $urls" --endpoint ""
bad_value "endpoint='' is not valid; $urls" --endpoint "$live,,$live"
bad_value "endpoint='http://' is not valid; $urls" --endpoint "http://"
bad_value "connect-timeout-ms='0' is not valid; $ms" --endpoint "$live" --connect-timeout-ms 0
bad_value "timeout-ms='1.5s' is not valid; $ms" --endpoint "$live" --timeout-ms 1.5s
bad_value "timeout-ms='60001' is not valid; $ms" --endpoint "$live" --timeout-ms 60001
bad_value "endpoint-fallback='maybe' is not valid; accepted: local|refuse" --endpoint "$live" --endpoint-fallback maybe
bad_value "cacert='$tmp/none.pem' is not valid; accepted: a readable PEM file of CA certificates" --endpoint "$live" --cacert "$tmp/none.pem"
bad_value "endpoint is missing; the client options need --endpoint=URL[,URL...]" --timeout-ms 100

echo "client: $pass passed, $failures failed"
((failures == 0))
