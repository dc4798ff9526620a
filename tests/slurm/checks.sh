# Check bookkeeping for the shell tests that run a cluster (source it): ok, fail, check, and
# checks_finish for the EXIT trap, which runs the test's own cleanup, prints the summary and
# makes the exit status non-zero when any check failed, whatever the last command returned.
pass=0; failures=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
fail() { failures=$((failures + 1)); echo "FAIL $1"; shift; printf '     %s\n' "$@"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name" "${detail:-}"; fi; }

# trap 'checks_finish CLEANUP' EXIT: CLEANUP may still fail checks; $dir is removed only
# when everything passed (kept for a look otherwise).
checks_finish() {
  "$1"
  echo "$pass passed, $failures failed"
  ((failures == 0)) || exit 1
  rm -rf "$dir"
}
