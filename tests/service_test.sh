#!/usr/bin/env bash
# Black-box tests of `trainfit serve`: the real server process on a free loopback port,
# driven with curl (and a raw socket for the slow clients). Every wait is bounded.
set -u
bin=$1
tmp=$(mktemp -d)
failures=0
pass=0
server_pid=
# $server_pid is timeout(1)'s, which passes SIGTERM on to the server and kills it at 100 s.
trap '[[ -n $server_pid ]] && kill -TERM "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

fail() { echo "FAIL $1"; failures=$((failures + 1)); }
ok() { pass=$((pass + 1)); }
py() { timeout 30 /usr/bin/python3 "$@"; }

# launch NAME SECONDS ARGS...: `trainfit serve ARGS` on a free loopback port (--listen :0
# prints the port it got), killed after SECONDS; sets $launched_pid and $launched_port.
launch() {
  local name=$1 seconds=$2
  shift 2
  timeout -k 5 "$seconds" "$bin" serve --listen 127.0.0.1:0 "$@" 2>"$tmp/$name.err" &
  launched_pid=$!
  launched_port=
  for _ in $(seq 100); do
    launched_port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/$name.err")
    [[ -n $launched_port ]] && break
    sleep 0.1
  done
  if [[ -z $launched_port ]]; then echo "FAIL server $name did not start:"; cat "$tmp/$name.err"; exit 1; fi
}

# The server most checks use; sets $base.
start_server() {
  launch server 100 --node-name test-node --threads 4 --timeout 3 --idle-timeout 2 --access-log "$tmp/access.log"
  server_pid=$launched_pid
  port=$launched_port
  base=http://127.0.0.1:$port
}

# req NAME WANT_STATUS CURL_ARGS... : the body lands in $tmp/NAME, headers in $tmp/NAME.h
req() {
  local name=$1 want=$2
  shift 2
  local got
  got=$(curl -sS --max-time 10 -o "$tmp/$name" -D "$tmp/$name.h" -w '%{http_code}' "$@")
  if [[ $got != "$want" ]]; then fail "$name: status $got, wanted $want"; head -c 300 "$tmp/$name"; echo; return 1; fi
  ok
}
post() { local name=$1 want=$2 path=$3 file=$4; req "$name" "$want" -X POST -H 'Content-Type: application/json' --data-binary "@$file" "$base$path"; }

# comparable FILE: the JSON text with the whitespace between tokens removed (strings kept
# byte for byte) and the members that name the serving node and its time dropped: the
# service writes compact what `estimate --format json` writes indented.
comparable() {
  py -c '
import re, sys
text, out, i = open(sys.argv[1], encoding="utf-8").read(), [], 0
while i < len(text):
    if text[i] == "\"":
        m = re.compile(r"\"(?:[^\"\\]|\\.)*\"").match(text, i)
        out.append(m.group()); i = m.end()
    else:
        if not text[i].isspace(): out.append(text[i])
        i += 1
print(re.sub(r",\"serving_node\":\"(?:[^\"\\]|\\.)*\",\"compute_ms\":[-+.0-9eE]+", "", "".join(out)))' "$1"
}

# json_get FILE EXPR: a Python expression over the parsed JSON `j`.
json_get() { py -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

start_server

# The seed's example request, on the endpoint and every alias.
# The seed's example request, as committed in tests/fixtures.
cp "$(dirname "$0")/fixtures/seed_request.json" "$tmp/seed.json"
"$bin" estimate --request "$tmp/seed.json" --format json >"$tmp/cli.json" 2>/dev/null
comparable "$tmp/cli.json" >"$tmp/cli.cmp"
seed_fields="model_states_unsharded_gb model_states_per_gpu_gb activations_per_gpu_gb per_gpu_total_gb gpu_capacity_gb
  utilization_percent fits bytes_per_param weights_per_gpu_gb grads_per_gpu_gb optimizer_per_gpu_gb min_gpus_to_fit
  aggregate_cluster_gb global_batch zero_stage checkpointing verdict profile serving_node compute_ms"
for path in /edge/training /edge/train /edge/finetune /edge/fsdp /edge/zero; do
  name=seed${path//\//_}
  post "$name" 200 "$path" "$tmp/seed.json" || continue
  # Exactly the CLI's --format json output, compact, but for the serving node and the time.
  [[ $(head -c 2 "$tmp/$name") == '{"' ]] && ok || fail "$name: not compact JSON"
  if comparable "$tmp/$name" | cmp -s - "$tmp/cli.cmp"; then ok; else
    fail "$name: differs from 'trainfit estimate --request --format json'"; fi
  missing=$(json_get "$tmp/$name" "' '.join(f for f in '''$seed_fields'''.split() if f not in j)")
  [[ -z $missing ]] && ok || fail "$name: seed fields missing: $missing"
  [[ $(json_get "$tmp/$name" "j['serving_node'], j['compute_ms'] >= 0, sorted(j['profile'])") == \
     "test-node True ['activation_gb', 'capacity_gb', 'fits', 'mem_vs_gpus', 'mem_vs_seq', 'model_state_gb', 'num_gpus', 'per_gpu_gb', 'seq_length']" ]] \
    && ok || fail "$name: serving_node, compute_ms or profile"
done
[[ $(json_get "$tmp/seed_edge_training" "len(j['profile']['mem_vs_gpus']), len(j['profile']['mem_vs_seq'])") == "48 48" ]] \
  && ok || fail "seed: profiles are not 48 points"
grep -q '^Content-Type: application/json' "$tmp/seed_edge_training.h" && ok || fail "seed: content type"

# GET endpoints: health, and the catalogs exactly as `trainfit models|gpus|fields --format json`.
req healthz 200 "$base/healthz" && [[ $(cat "$tmp/healthz") == ok ]] && ok || fail "healthz body"
for what in models gpus fields; do
  req "v1_$what" 200 "$base/v1/$what" && { "$bin" "$what" --format json | cmp -s - "$tmp/v1_$what" && ok || fail "v1/$what differs from the CLI"; }
done
req head_healthz 200 -I "$base/healthz"

# Bad input: 400 with the CLI's words, naming the field.
echo '{"model":"llama3-8b","seq_length":"abc"}' >"$tmp/bad_seq.json"
post bad_seq 400 /edge/training "$tmp/bad_seq.json"
cli_msg=$("$bin" estimate --request "$tmp/bad_seq.json" --format json 2>&1 >/dev/null | sed 's/^trainfit: //')
[[ $(json_get "$tmp/bad_seq" "j['error']['field']") == seq_length ]] && ok || fail "400 does not name the field"
[[ $(json_get "$tmp/bad_seq" "j['error']['message']") == "$cli_msg" ]] && ok || fail "400 message is not the CLI's: $cli_msg"
echo '{"model":"llama3-8b","gpu":"h1000"}' >"$tmp/bad_gpu.json"
post bad_gpu 400 /edge/train "$tmp/bad_gpu.json" && grep -q "did you mean 'h100'" "$tmp/bad_gpu" && ok || fail "400 gpu hint"
echo '{"gpus_count": 4}' >"$tmp/bad_field.json"
post bad_field 400 /edge/zero "$tmp/bad_field.json" && [[ $(json_get "$tmp/bad_field" "j['error']['code']") == unknown_field ]] && ok || fail "400 unknown_field"
printf '{"model": }' >"$tmp/bad_json.json"
post bad_json 400 /edge/fsdp "$tmp/bad_json.json" && [[ $(json_get "$tmp/bad_json" "j['error']['code']") == malformed ]] && ok || fail "400 malformed"
printf '' >"$tmp/empty.json"
post empty_body 400 /edge/finetune "$tmp/empty.json"
printf '[1,2,3]' >"$tmp/array.json"
post array_body 400 /edge/training "$tmp/array.json"
printf '{"model":"llama3-8b","num_gpus":1e308}' >"$tmp/huge.json"
post huge_number 400 /edge/training "$tmp/huge.json"

# HTTP errors.
req not_found 404 "$base/edge/nope"
req not_found_root 404 "$base/v1/nope"   # GET / is the page (docs/service.md, "The page")
req get_estimate 405 "$base/edge/training" && grep -qi '^Allow: POST' "$tmp/get_estimate.h" && ok || fail "405 lacks Allow: POST"
req post_healthz 405 -X POST -H 'Content-Type: application/json' -d '{}' "$base/healthz"
req delete_estimate 405 -X DELETE "$base/edge/zero"
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$tmp/big.json"
post too_large 413 /edge/training "$tmp/big.json"
req chunked 200 -X POST -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$tmp/seed.json" "$base/edge/training"
req chunked_too_large 413 -X POST -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$tmp/big.json" "$base/edge/zero"
# A POST with no Content-Length and no chunking has an empty body: answered at once, not
# after waiting for the client to close.
py - "$port" >"$tmp/unframed" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /edge/training HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n")
s.settimeout(2)
print(s.recv(64).split(b"\r\n")[0].decode())
PY
[[ $(cat "$tmp/unframed") == "HTTP/1.1 400 Bad Request" ]] && ok || fail "unframed POST: $(cat "$tmp/unframed")"
req text_plain 415 -X POST -H 'Content-Type: text/plain' --data-binary "@$tmp/seed.json" "$base/edge/training"
req form 200 -X POST --data-binary "@$tmp/seed.json" "$base/edge/training"   # curl -d's default type, a JSON body
req json_charset 200 -X POST -H 'Content-Type: application/json; charset=utf-8' --data-binary "@$tmp/seed.json" "$base/edge/training"
req no_type 200 -X POST -H 'Content-Type:' --data-binary "@$tmp/seed.json" "$base/edge/training"

# Concurrent clients: 50 at once, all answered in full.
for i in $(seq 50); do
  paths=(/edge/training /edge/train /edge/finetune /edge/fsdp /edge/zero)
  curl -sS --max-time 30 -o "$tmp/par$i" -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' \
    --data-binary "@$tmp/seed.json" "$base${paths[i % 5]}" >"$tmp/par$i.code" &
done
wait $(jobs -p | grep -v "^$server_pid\$")
good=0
for i in $(seq 50); do
  [[ $(cat "$tmp/par$i.code") == 200 ]] && comparable "$tmp/par$i" | cmp -s - "$tmp/cli.cmp" && good=$((good + 1))
done
[[ $good == 50 ]] && ok || fail "concurrent: $good of 50 answered correctly"

# Slow clients: three connections (of 4 threads) send half a body and stall; the others are
# still answered at once, and the stalled ones are cut off by the read timeout (3 s).
cat >"$tmp/slow.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /edge/training HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n" + b" " * 100)
open(sys.argv[2], "w").close()
s.settimeout(10)
start = time.time()
try:
    data = s.recv(4096)
except OSError:
    data = b""
print("closed after %.1f s: %r" % (time.time() - start, data[:40]))
PY
for i in 1 2 3; do py "$tmp/slow.py" "$port" "$tmp/slow$i.ready" >"$tmp/slow$i.out" 2>&1 & done
for _ in $(seq 50); do [[ -e $tmp/slow1.ready && -e $tmp/slow2.ready && -e $tmp/slow3.ready ]] && break; sleep 0.1; done
start=$(date +%s.%N)
for i in $(seq 5); do post "during_slow$i" 200 /edge/training "$tmp/seed.json"; done
elapsed=$(py -c "print(f'{$(date +%s.%N) - $start:.2f}')")
py -c "import sys; sys.exit(0 if $elapsed < 2.5 else 1)" && ok || fail "slow clients stalled the others: 5 requests took $elapsed s"
wait $(jobs -p | grep -v "^$server_pid\$")
for i in 1 2 3; do grep -q "^closed after [23].[0-9] s: b'HTTP/1.1 408 " "$tmp/slow$i.out" && ok || fail "slow client $i: $(cat "$tmp/slow$i.out")"; done

# Metrics: counters and the histogram, by path and status.
req metrics 200 "$base/metrics"
for pattern in '^# TYPE trainfit_http_requests_total counter' '^# TYPE trainfit_http_request_duration_seconds histogram' \
  '^trainfit_http_requests_total\{path="/edge/training",status="200"\} [0-9]+' \
  '^trainfit_http_errors_total\{path="/edge/training",status="400"\} 4$' \
  '^trainfit_http_errors_total\{path="other",status="404"\} 2$' \
  '^trainfit_http_errors_total\{path="/edge/training",status="413"\} 1$' \
  '^trainfit_http_errors_total\{path="/edge/zero",status="413"\} 1$' \
  '^trainfit_http_errors_total\{path="/edge/training",status="408"\} 3$' \
  '^trainfit_http_request_duration_seconds_bucket\{path="/edge/zero",status="200",le="\+Inf"\} [0-9]+' \
  '^trainfit_http_request_duration_seconds_count\{path="/healthz",status="200"\} [0-9]+'; do
  grep -qE "$pattern" "$tmp/metrics" && ok || fail "metrics lack /$pattern/"
done

# The access log: one JSON object per line, with the fields documented.
py - "$tmp/access.log" <<'PY' && ok || fail "access log"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [json.loads(l) for l in lines]
keys = ["time", "remote", "method", "path", "status", "bytes", "duration_us"]
assert all(list(r) == keys for r in rows), rows[0]
assert len(rows) >= 80, len(rows)
assert any(r["status"] == 413 for r in rows) and any(r["path"] == "/edge/fsdp" for r in rows)
PY

# Hostile bytes: each is answered or dropped, and the server still serves.
py - "$port" <<'PY' >"$tmp/hostile" 2>&1
import os, socket, sys
cases = [os.urandom(3000), b"GET /" + b"a" * 10000 + b" HTTP/1.1\r\n\r\n",
         b"GET /x HTTP/1.1\r\nX: " + b"b" * 20000 + b"\r\n\r\n", b"GET /\xff\xfe\x00%00 HTTP/1.1\r\nHost: x\r\n\r\n",
         b"BREW /edge/training HTTP/1.1\r\n\r\n", b"POST /edge/training HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
         b"POST /edge/training HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
         b"POST /edge/training HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
         b'POST /edge/training HTTP/1.1\r\nContent-Length: 12\r\n\r\n{"model":"\xff"}']
for case in cases:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.settimeout(5)
    try:
        s.sendall(case)
        print(repr(s.recv(40)))
    except OSError as e:
        print("dropped:", e)
    s.close()
PY
req after_hostile 200 "$base/healthz" || cat "$tmp/hostile"
grep -q "500" "$tmp/hostile" && fail "hostile input got a 500: $(grep 500 "$tmp/hostile")" || ok
grep -q "^b'HTTP/1.1 414 " "$tmp/hostile" && ok || fail "a 10000-byte URI is not answered 414"
grep -q "^b'HTTP/1.1 431 " "$tmp/hostile" && ok || fail "a 20000-byte header is not answered 431"

# Many idle connections (300, with 4 threads) hold no thread: requests are answered at
# once while they are open, and the idle ones are closed after --idle-timeout (2 s).
cat >"$tmp/idle.py" <<'PY'
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(300)]
open(sys.argv[2], "w").close()
time.sleep(0.5)
closed = 0
deadline = time.time() + 6
for c in conns:
    c.settimeout(max(0.1, deadline - time.time()))
    try:
        closed += c.recv(1) == b""
    except OSError:
        pass
print(closed)
PY
py "$tmp/idle.py" "$port" "$tmp/idle.ready" >"$tmp/idle.out" 2>&1 &
idle_client=$!
for _ in $(seq 50); do [[ -e $tmp/idle.ready ]] && break; sleep 0.1; done
start=$(date +%s.%N)
for i in $(seq 5); do post "during_idle$i" 200 /edge/training "$tmp/seed.json"; done
elapsed=$(py -c "print(f'{$(date +%s.%N) - $start:.2f}')")
py -c "import sys; sys.exit(0 if $elapsed < 2.0 else 1)" && ok || fail "300 idle connections stalled requests: 5 took $elapsed s"
wait "$idle_client"
[[ $(cat "$tmp/idle.out") == 300 ]] && ok || fail "idle connections closed by the server: $(cat "$tmp/idle.out") of 300"

# Started as root, it runs as --user (default nobody), after binding.
if [[ $(id -u) == 0 ]]; then
  serve_pid=$(pgrep -P "$server_pid" | head -1)
  uid=$(awk '/^Uid:/ {print $2}' "/proc/$serve_pid/status")
  [[ $uid == "$(id -u nobody)" ]] && ok || fail "started as root, runs as uid '$uid', not nobody's"
  grep -q "user nobody$" "$tmp/server.err" && ok || fail "the start line does not name the user"
fi

# A port already taken: exit 2, saying so.
out=$(timeout 10 "$bin" serve --listen "127.0.0.1:$port" 2>&1); rc=$?
[[ $rc == 2 && $out == *"listen='127.0.0.1:$port' cannot be bound"* ]] && ok || fail "port in use: rc $rc: $out"

# SIGTERM: a request in flight (half its body sent) is answered, then the server exits 0.
cat >"$tmp/inflight.py" <<'PY'
import socket, sys, time
body = open(sys.argv[3], "rb").read()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /edge/training HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:20])
open(sys.argv[2], "w").close()
time.sleep(1)
s.sendall(body[20:])
s.settimeout(10)
print(s.recv(64).split(b"\r\n")[0].decode())
PY
py "$tmp/inflight.py" "$port" "$tmp/inflight.ready" "$tmp/seed.json" >"$tmp/inflight.out" 2>&1 &
client=$!
for _ in $(seq 50); do [[ -e $tmp/inflight.ready ]] && break; sleep 0.1; done
kill -TERM "$server_pid"
wait "$client"
[[ $(cat "$tmp/inflight.out") == "HTTP/1.1 200 OK" ]] && ok || fail "in-flight request at SIGTERM: $(cat "$tmp/inflight.out")"
wait "$server_pid"
rc=$?
server_pid=
[[ $rc == 0 ]] && ok || { fail "exit code after SIGTERM: $rc"; cat "$tmp/server.err"; }
grep -q '^trainfit: stopped$' "$tmp/server.err" && ok || fail "no 'stopped' line"

# --max-connections 2: a third client waits in the listen backlog until one of two idle
# connections closes, then is answered.
launch limited 30 --max-connections 2 --idle-timeout 10 --access-log /dev/null
limited_pid=$launched_pid limited_port=$launched_port
# No --threads: one fewer than the cores it may run on (nproc counts its affinity), at least 1.
cores=$(nproc)
want_threads=$((cores > 1 ? cores - 1 : 1))
[[ $want_threads == 1 ]] && want_threads="1 thread" || want_threads="$want_threads threads"
grep -q "with $want_threads, user" "$tmp/limited.err" && ok || fail "default threads on $cores cores: $(head -1 "$tmp/limited.err")"
timeout -k 2 10 taskset -c 0 "$bin" serve --listen 127.0.0.1:0 --access-log /dev/null 2>"$tmp/one_core.err" &
one_core=$!
for _ in $(seq 50); do grep -q 'serving on' "$tmp/one_core.err" && break; sleep 0.1; done
kill -TERM $one_core 2>/dev/null
wait $one_core
grep -q "with 1 thread, user" "$tmp/one_core.err" && ok || fail "default threads on one core: $(head -1 "$tmp/one_core.err")"
py - "$limited_port" >"$tmp/limited.out" 2>&1 <<'PY'
import socket, sys, time
port = int(sys.argv[1])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
time.sleep(0.3)
third = socket.create_connection(("127.0.0.1", port))  # completes in the kernel's backlog
third.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
third.settimeout(1)
try:
    early = third.recv(64)
except socket.timeout:
    early = b""
idle[0].close()
third.settimeout(5)
late = third.recv(64)
print("early=%r late=%r" % (early[:15], late[:15]))
PY
[[ $(cat "$tmp/limited.out") == "early=b'' late=b'HTTP/1.1 200 OK'" ]] && ok || fail "max-connections: $(cat "$tmp/limited.out")"
kill -TERM "$limited_pid" 2>/dev/null
wait "$limited_pid"

# SIGTERM under keep-alive load on 16 threads: every connection, busy or idle, is closed and
# the server exits at once (a stop that dropped a connection's last reference under the
# hub's lock once hung it here).
launch loaded 60 --threads 16 --access-log /dev/null
loaded_pid=$launched_pid loaded_port=$launched_port
py - "$loaded_port" "$tmp/loaded.ready" >/dev/null 2>&1 <<'PY' &
import http.client, sys, threading, time
def hammer():
    end = time.time() + 4
    while time.time() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
            while time.time() < end:
                c.request("GET", "/healthz"); c.getresponse().read()
        except Exception:
            time.sleep(0.05)
threads = [threading.Thread(target=hammer) for _ in range(8)]
[t.start() for t in threads]
time.sleep(0.5); open(sys.argv[2], "w").close()
[t.join() for t in threads]
PY
load_pid=$!
for _ in $(seq 50); do [[ -e $tmp/loaded.ready ]] && break; sleep 0.1; done
start=$(date +%s.%N)
kill -TERM "$loaded_pid"
wait "$loaded_pid"; rc=$?
elapsed=$(py -c "print(f'{$(date +%s.%N) - $start:.1f}')")
[[ $rc == 0 ]] && py -c "import sys; sys.exit(0 if $elapsed < 3 else 1)" && grep -q '^trainfit: stopped$' "$tmp/loaded.err" \
  && ok || fail "SIGTERM under keep-alive load: rc $rc after $elapsed s"
wait "$load_pid"

# A full disk under the access log (/dev/full: every write fails with ENOSPC): requests are
# still answered, and the lines lost are counted and said at exit.
launch full_disk 30 --access-log /dev/full
statuses=$(for _ in 1 2 3 4 5; do curl -s -o /dev/null -w '%{http_code} ' "http://127.0.0.1:$launched_port/healthz"; done)
kill -TERM "$launched_pid"; wait "$launched_pid"; rc=$?
[[ $statuses == "200 200 200 200 200 " && $rc == 0 ]] &&
  grep -qx 'trainfit: 5 access log lines could not be written in full' "$tmp/full_disk.err" && ok ||
  fail "full disk: statuses '$statuses', rc $rc: $(cat "$tmp/full_disk.err")"

# logrotate renames the access log, then SIGHUP: the service writes a new file at the path;
# the catalog reload runs off the event loop, so a one-thread service answers meanwhile.
# Started as root, the service writes as the unprivileged user it becomes: its log folder is
# that user's (as logrotate's `create` and systemd's LogsDirectory= make it).
mkdir -p "$tmp/logs"
[[ $(id -u) == 0 ]] && chmod 755 "$tmp" && chown nobody "$tmp/logs"
launch rotated 30 --threads 1 --access-log "$tmp/logs/rotated.log"
server=$(pgrep -P "$launched_pid" | head -1)  # trainfit itself (timeout forwards no HUP)
curl -s -o /dev/null "http://127.0.0.1:$launched_port/healthz"
mv "$tmp/logs/rotated.log" "$tmp/logs/rotated.log.1"
kill -HUP "$server"
for _ in $(seq 100); do grep -q "site catalogs" "$tmp/rotated.err" && break; sleep 0.05; done
curl -s -o /dev/null "http://127.0.0.1:$launched_port/v1/gpus"
sleep 0.2
kill -TERM "$launched_pid"; wait "$launched_pid"
[[ $(grep -c /healthz "$tmp/logs/rotated.log.1") == 1 && $(grep -c /v1/gpus "$tmp/logs/rotated.log.1") == 0 &&
   $(grep -c /v1/gpus "$tmp/logs/rotated.log" 2>/dev/null) == 1 ]] && ok \
  || fail "access log rotation: old $(wc -l < "$tmp/logs/rotated.log.1") lines, new: $(cat "$tmp/logs/rotated.log" 2>&1); $(tail -3 "$tmp/rotated.err")"

# Options: a bad --listen is exit 2 with the CLI's words.
out=$(timeout 10 "$bin" serve --listen nowhere 2>&1); rc=$?
[[ $rc == 2 && $out == *"listen='nowhere' is not valid; accepted: HOST:PORT"* ]] && ok || fail "bad --listen: rc $rc: $out"

echo "service: $pass passed, $failures failed"
[[ $failures == 0 ]]
