#!/usr/bin/env bash
# `trainfit serve` under hostile load for ~25 s (tests/service_hostile.py says what is sent and
# what is checked: well-formed answers and p99, no 5xx, bounded VmRSS, /healthz, clean SIGTERM).
# Runs in the sanitizer pass too (scripts/test.sh), where any ASan/UBSan report fails it.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:quarantine_size_mb=64}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
exec timeout -k 10 150 /usr/bin/python3 "$here/service_hostile.py" "$bin" "$here/fixtures/seed_request.json" "${SERVICE_HOSTILE_SECONDS:-25}"
