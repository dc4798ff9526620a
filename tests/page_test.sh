#!/usr/bin/env bash
# The service's page (docs/service.md, "The page") in a real browser: the real `trainfit
# serve` on a free loopback port, Debian's headless chromium driven over the Chrome
# DevTools Protocol by tests/page_test.py. Expected numbers come from `trainfit estimate`.
#   bash tests/page_test.sh BUILD/cli/trainfit [SCREENSHOT_DIR]
# Screenshots (page.png, page-config.png, report.png) go to SCREENSHOT_DIR (default: the
# trainfit binary's directory/page-screenshots). Bounded: under 130 s.
set -u
bin=$(readlink -f "$1")
shots=${2:-$(dirname "$bin")/page-screenshots}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
server_pid=
# chromium runs in its own session (page_test.py): its whole group goes.
trap '[[ -s $tmp/chromium.pid ]] && kill -KILL -- "-$(cat "$tmp/chromium.pid")" 2>/dev/null
      [[ -n $server_pid ]] && kill -TERM "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$shots"
rm -f "$shots"/*.png

for need in chromium /usr/bin/python3; do
  command -v "$need" >/dev/null || { echo "FAIL $need is not installed (scripts/install-deps.sh installs it)"; exit 1; }
done
/usr/bin/python3 -c 'import websocket' 2>/dev/null || { echo "FAIL python3-websocket is not installed (scripts/install-deps.sh)"; exit 1; }

# `trainfit serve` on a free port, stopped after 125 s at the latest (timeout passes SIGTERM on).
timeout -k 5 125 "$bin" serve --listen 127.0.0.1:0 --node-name page-test --threads 2 --access-log "$tmp/access.log" \
  2>"$tmp/serve.err" &
server_pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/^trainfit: serving on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/serve.err")
  [[ -n $port ]] && break
  sleep 0.1
done
if [[ -z $port ]]; then echo "FAIL the server did not start:"; cat "$tmp/serve.err"; exit 1; fi

timeout -k 5 120 /usr/bin/python3 "$here/page_test.py" --trainfit "$bin" --base "http://127.0.0.1:$port" \
  --fixtures "$here/fixtures" --tmp "$tmp" --shots "$shots"
rc=$?
if ((rc != 0)); then
  echo "--- server stderr"; tail -5 "$tmp/serve.err"
  echo "FAIL page test (exit $rc)"
  exit 1
fi
echo "page: all checks passed; screenshots in $shots"
