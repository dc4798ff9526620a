#!/usr/bin/env bash
# A pool of two `trainfit serve` replicas behind a real load balancer on loopback: haproxy with
# conf/haproxy/trainfit.cfg, then nginx with conf/nginx/trainfit.conf (docs/service.md, "Scaling
# out"). Keep-alive clients post the seed's request through it; one replica is killed (SIGKILL,
# then SIGTERM) mid-load; no request may fail, serving_node must name both replicas before and
# only the survivor once the other is gone. Every wait is bounded; the whole run takes about a minute.
#
#   service_pool_test.sh TRAINFIT [--without-retries]
#
# --without-retries turns the load balancers' retries off (haproxy: retry-on none, retries 0;
# nginx: proxy_next_upstream off) and expects requests to be lost at the SIGKILL: the proof that
# this test can fail.
set -u
bin=$1
mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tmp=$(mktemp -d)
failures=0
pass=0
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL $1"; failures=$((failures + 1)); }
ok() { pass=$((pass + 1)); }
py() { timeout 60 /usr/bin/python3 "$@"; }
now() { date +%s.%N; }
free_port() { py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for tool in haproxy nginx; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is not installed (scripts/install-deps.sh)"; exit 1; }
done
if [[ $mode == --without-retries ]]; then expect=loss; else expect=no-loss; fi

# conf/k8s/trainfit.yaml parses (python3-yaml, where installed; there is no cluster to apply it to).
if py -c 'import yaml' 2>/dev/null; then
  py - "$root/conf/k8s/trainfit.yaml" <<'PY' && ok || fail "conf/k8s/trainfit.yaml"
import sys, yaml
deployment, service = yaml.safe_load_all(open(sys.argv[1]))
assert deployment["kind"] == "Deployment" and deployment["spec"]["replicas"] == 2 and service["kind"] == "Service"
container = deployment["spec"]["template"]["spec"]["containers"][0]
assert container["args"] == ["serve", "--listen", "0.0.0.0:8080", "--node-name", "$(POD_NAME)", "--threads", "2"]
# One thread per CPU of the limit: a quota is not an affinity mask, so the default would count the node's cores.
assert container["resources"]["limits"]["cpu"] == container["args"][-1]
PY
fi

# docs/service.md shows the three files whole, as they are.
for f in conf/haproxy/trainfit.cfg conf/nginx/trainfit.conf conf/k8s/trainfit.yaml; do
  py - "$root/$f" "$root/docs/service.md" <<'PY' && ok || fail "docs/service.md does not show $f as it is"
import sys
want = "".join("    " + l if l.strip() else "\n" for l in open(sys.argv[1]).read().splitlines(True))
sys.exit(0 if want in open(sys.argv[2]).read() else 1)
PY
done

# The seed's example request, as committed in tests/fixtures.
cp "$(dirname "$0")/fixtures/seed_request.json" "$tmp/seed.json"
"$bin" estimate --request "$tmp/seed.json" --format json >"$tmp/cli.json" 2>/dev/null

# start_replica NAME: a replica on a free port; sets ${NAME}_port and ${NAME}_pid (trainfit's own
# pid, under timeout(1) so that nothing outlives the test). A short --idle-timeout lets a
# SIGTERM's drain end within the load.
start_replica() {
  local name=$1 port= t
  timeout -k 5 100 "$bin" serve --listen 127.0.0.1:0 --node-name "$name" --threads 32 --idle-timeout 2 \
    --access-log "$tmp/$name.access" 2>"$tmp/$name.err" &
  t=$!
  pids+=("$t")
  for _ in $(seq 100); do
    port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/$name.err" 2>/dev/null)
    [[ -n $port ]] && break
    sleep 0.1
  done
  [[ -n $port ]] || { echo "FAIL $name did not start:"; cat "$tmp/$name.err"; exit 1; }
  printf -v "${name//-/_}_port" %s "$port"
  printf -v "${name//-/_}_pid" %s "$(pgrep -P "$t")"
}

# haproxy_stat SERVER FIELD: a field of haproxy's CSV statistics for backend trainfit's SERVER.
haproxy_stat() {
  curl -s --max-time 2 "http://127.0.0.1:$stats_port/stats;csv" | py -c '
import csv, sys
rows = list(csv.DictReader(l.lstrip("# ") for l in sys.stdin))
print(next((r[sys.argv[2]] for r in rows if r["pxname"] == "trainfit" and r["svname"] == sys.argv[1]), ""))' "$1" "$2"
}

start_haproxy() {
  local cfg=$root/conf/haproxy/trainfit.cfg
  if [[ $expect == loss ]]; then
    sed -e 's/^\( *\)retry-on .*/\1retry-on none/' -e 's/^\( *\)retries .*/\1retries 0/' \
        -e 's/^\( *\)option redispatch.*/\1no option redispatch/' "$cfg" >"$tmp/haproxy.cfg"
    cfg=$tmp/haproxy.cfg
  fi
  stats_port=$(free_port)
  TRAINFIT_LISTEN=127.0.0.1:$lb_port TRAINFIT_HAPROXY_STATS=127.0.0.1:$stats_port \
    TRAINFIT_REPLICA_A=127.0.0.1:$replica_a_port TRAINFIT_REPLICA_B=127.0.0.1:$replica_b_port \
    timeout -k 5 100 haproxy -db -f "$cfg" 2>"$tmp/lb.err" &
  lb_pid=$!
  pids+=("$lb_pid")
  # Both replicas UP by the health checks.
  for _ in $(seq 100); do
    [[ $(haproxy_stat replica-a status) == UP && $(haproxy_stat replica-b status) == UP ]] && return 0
    sleep 0.1
  done
  echo "FAIL haproxy: replicas not UP"; cat "$tmp/lb.err"; return 1
}

start_nginx() {
  # The committed snippet with the three addresses replaced, in an nginx.conf that keeps every
  # path (pid, logs, temporary files) under $tmp, so that nginx needs no root.
  sed -e "s/127\.0\.0\.1:8081/127.0.0.1:$replica_a_port/" -e "s/127\.0\.0\.1:8082/127.0.0.1:$replica_b_port/" \
      -e "s/listen 127\.0\.0\.1:8080;/listen 127.0.0.1:$lb_port;/" "$root/conf/nginx/trainfit.conf" >"$tmp/trainfit.conf"
  [[ $(grep -cE "127\.0\.0\.1:($replica_a_port|$replica_b_port|$lb_port)[ ;]" "$tmp/trainfit.conf") == 3 ]] ||
    { echo "FAIL nginx: conf/nginx/trainfit.conf no longer has the addresses this test replaces"; return 1; }
  [[ $expect == loss ]] && sed -i 's/^\( *\)proxy_next_upstream .*/\1proxy_next_upstream off;/' "$tmp/trainfit.conf"
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx.conf" <<EOF
pid $tmp/nginx/nginx.pid;
error_log stderr warn;
worker_processes 2;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    include $tmp/trainfit.conf;
}
EOF
  timeout -k 5 100 nginx -p "$tmp/nginx" -e stderr -c "$tmp/nginx.conf" -g 'daemon off;' 2>"$tmp/lb.err" &
  lb_pid=$!
  pids+=("$lb_pid")
}

# Both replicas answer through the load balancer.
wait_both_serving() {
  local seen=
  for _ in $(seq 50); do
    seen+=" $(curl -s --max-time 2 -X POST -H 'Content-Type: application/json' --data-binary "@$tmp/seed.json" \
      "http://127.0.0.1:$lb_port/edge/training" | py -c 'import json,sys; print(json.load(sys.stdin)["serving_node"])' 2>/dev/null)"
    [[ $seen == *replica-a* && $seen == *replica-b* ]] && return 0
    sleep 0.1
  done
  echo "FAIL $lb: replicas not both serving (seen:$seen)"; cat "$tmp/lb.err"; return 1
}

# run_case LB SIGNAL: fresh replicas and load balancer; 8 s of load from 8 keep-alive clients;
# replica-b gets SIGNAL 2.5 s in.
run_case() {
  lb=$1
  local sig=$2 name="$1 SIG$2" signal_from kill_time gone_time= down_time= exit_time=
  echo "== $name"
  start_replica replica-a
  start_replica replica-b
  lb_port=$(free_port)
  "start_$lb" && wait_both_serving || { fail "$name: setup"; stop_case; return; }
  rm -f "$tmp/ready"
  py "$here/service_pool_load.py" load "$lb_port" 8 8 "$tmp/seed.json" "$tmp/cli.json" "$tmp/records" "$tmp/ready" &
  local load=$!
  for _ in $(seq 50); do [[ -e $tmp/ready ]] && break; sleep 0.1; done
  sleep 2.5
  # Until the load ends: when haproxy marks the victim DOWN, and when the victim has exited.
  # (stderr: bash's notice that a job was killed.)
  {
    signal_from=$(now)
    kill -"$sig" "$replica_b_pid"
    kill_time=$(now)
    while kill -0 "$load" 2>/dev/null; do
      [[ -z $exit_time ]] && ! kill -0 "$replica_b_pid" 2>/dev/null && exit_time=$(now)
      [[ $lb == haproxy && -z $down_time && $(haproxy_stat replica-b status) == DOWN* ]] && down_time=$(now)
      sleep 0.1
    done
    wait "$load"
  } 2>/dev/null
  # The victim is gone once it has exited and, for haproxy, been marked DOWN.
  gone_time=$exit_time
  [[ $lb == haproxy ]] && gone_time=$down_time
  [[ $lb == haproxy && $sig == TERM && -n $exit_time && -n $down_time ]] &&
    gone_time=$(py -c "print(max($exit_time, $down_time))")
  if [[ -z $gone_time ]]; then
    fail "$name: replica-b did not go (exited: ${exit_time:-no}, marked DOWN: ${down_time:-no})"
  elif py "$here/service_pool_load.py" check "$tmp/records" "$signal_from" "$kill_time" "$gone_time" replica-b replica-a "$expect"; then
    ok
  else
    fail "$name"
  fi
  if [[ $lb == haproxy ]]; then
    echo "  haproxy: replica-b $(haproxy_stat replica-b status) after $(py -c "print('%.1f s' % ($down_time - $kill_time))" 2>/dev/null);" \
      "retries $(haproxy_stat replica-b wretr), redispatches $(haproxy_stat replica-b wredis)," \
      "connection errors $(haproxy_stat replica-b econ), response errors $(haproxy_stat replica-b eresp)"
  fi
  if [[ $sig == TERM ]]; then  # the drain ends, and cleanly (bounded: the --idle-timeout and --timeout)
    for _ in $(seq 100); do kill -0 "$replica_b_pid" 2>/dev/null || break; sleep 0.1; done
    grep -q '^trainfit: stopped$' "$tmp/replica-b.err" && ok || fail "$name: replica-b did not stop cleanly within 10 s"
  fi
  stop_case
}

stop_case() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  pids=()
}

run_case haproxy KILL
[[ $expect == no-loss ]] && run_case haproxy TERM
run_case nginx KILL
[[ $expect == no-loss ]] && run_case nginx TERM

echo "service_pool: $pass passed, $failures failed"
[[ $failures == 0 ]]
