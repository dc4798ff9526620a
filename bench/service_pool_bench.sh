#!/usr/bin/env bash
# wrk through haproxy (conf/haproxy/trainfit.cfg, as tests/service_pool_test.sh runs it) in front
# of two `trainfit serve` replicas on loopback, then directly against one replica, posting the
# seed's request (bench/service_post_seed.lua). Prints wrk's reports and the load average.
# Usage: bench/service_pool_bench.sh TRAINFIT [DURATION=10s] [CONNECTIONS=64] [THREADS=2]
set -eu
bin=$1
duration=${2:-10s}
conns=${3:-64}
threads=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A replica per name on a free port; 64 threads (the default) = wrk's 64 connections.
declare -A port
for name in replica-a replica-b; do
  "$bin" serve --listen 127.0.0.1:0 --node-name "$name" --access-log /dev/null 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    port[$name]=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/$name.err")
    [[ -n ${port[$name]} ]] && break
    sleep 0.1
  done
  [[ -n ${port[$name]} ]] || { cat "$tmp/$name.err"; exit 1; }
done

lb=$(free_port)
stats=$(free_port)
TRAINFIT_LISTEN=127.0.0.1:$lb TRAINFIT_HAPROXY_STATS=127.0.0.1:$stats \
  TRAINFIT_REPLICA_A=127.0.0.1:${port[replica-a]} TRAINFIT_REPLICA_B=127.0.0.1:${port[replica-b]} \
  haproxy -db -f "$root/conf/haproxy/trainfit.cfg" 2>"$tmp/haproxy.err" &
pids+=($!)
for _ in $(seq 100); do
  [[ $(curl -s --max-time 2 "http://127.0.0.1:$stats/stats;csv" | grep -c '^trainfit,replica-.*,UP,') == 2 ]] && break
  sleep 0.1
done

run() {  # run LABEL URL
  echo "== $1: wrk -t$threads -c$conns -d$duration --latency ($(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg))"
  wrk -t"$threads" -c"$conns" -d"$duration" --latency -s "$here/service_post_seed.lua" "$2"
}
run "through haproxy to 2 replicas" "http://127.0.0.1:$lb"
run "one replica directly" "http://127.0.0.1:${port[replica-a]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
