#!/usr/bin/env bash
# What this machine allows wrk -t2 -c64 to measure, beside `trainfit serve`: nginx (Debian's
# nginx-light, 2 workers, no access log) answering the same compact JSON answer as a static
# file, and answering 3 bytes. Rounds alternate the three, so that each sees the same
# moments of the machine; each prints requests/s and the latency percentiles.
# Usage: bench/service_floor_bench.sh TRAINFIT [ROUNDS=3] [DURATION=10s]
set -eu
bin=$1
rounds=${2:-3}
duration=${3:-10s}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"
server=
cleanup() {
  [[ -n $server ]] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [[ -f $tmp/nginx.pid ]] && kill -QUIT "$(cat "$tmp/nginx.pid")" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

"$bin" serve --listen 127.0.0.1:0 --node-name bench --access-log /dev/null 2>"$tmp/serve.err" &
server=$!
for _ in $(seq 100); do
  port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/serve.err")
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { cat "$tmp/serve.err"; exit 1; }
# The service's own answer to the seed's request, as nginx's static file.
curl -sS -X POST -H 'Content-Type: application/json' --data-binary @"$here/../tests/fixtures/seed_request.json" \
  -o "$tmp/answer.json" "http://127.0.0.1:$port/edge/training"
chmod 644 "$tmp/answer.json"

ngx=$(free_port)
cat >"$tmp/nginx.conf" <<CONF
worker_processes 2;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp;
  server {
    listen 127.0.0.1:$ngx;
    location = /answer.json { default_type application/json; root $tmp; }
    location = /ok { return 200 "ok\n"; }
  }
}
CONF
nginx -c "$tmp/nginx.conf" -p "$tmp"
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$ngx/ok" && break; sleep 0.1; done

measure() {  # LABEL WRK-ARGS...
  local label=$1
  shift
  wrk -t2 -c64 -d"$duration" -s "$here/service_post_seed.lua" "$@" |
    awk -v label="$label" '/Requests\/sec/ {rps=$2} /^p50=/ {pct=$0} /Non-2xx|Socket errors/ {err=err " " $0}
                           END {printf "%-44s %9s req/s  %s%s\n", label, rps, pct, err}'
}
echo "wrk -t2 -c64 -d$duration; $(nproc) cores; $bin; $(wc -c <"$tmp/answer.json") bytes answered"
for round in $(seq "$rounds"); do
  echo "-- round $round (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  measure "trainfit serve, POST seed request" "http://127.0.0.1:$port"
  measure "nginx, GET the same answer (static file)" "http://127.0.0.1:$ngx/answer.json" -- get
  measure "nginx, GET 3 bytes" "http://127.0.0.1:$ngx/ok" -- get
done
