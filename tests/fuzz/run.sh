#!/usr/bin/env bash
# Runs every fuzz target on a copy of its seed corpus, or replays the committed inputs
# (tests/fuzz/README.md).
#   bash tests/fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]   fuzz for a time (by hand)
#   bash tests/fuzz/run.sh --ci BUILD_DIR [TARGET...]                 fuzz reproducibly (CI): a fixed
#       seed ($TRAINFIT_FUZZ_SEED, default 1) and a fixed number of runs per target (ci_runs), so
#       that the same commit gets the same answer; what longer fuzzing finds is committed to
#       regressions/, which every run replays
#   bash tests/fuzz/run.sh --replay BUILD_DIR [TARGET...]             replay corpus/ and regressions/
# Nothing is written into the repository: corpora and crash files go to a temp dir, which
# is kept (and named) when a target fails. Exit status 1 when any target crashed, hung,
# ran out of memory or failed a replay.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
all_targets=(request_json llm_options comment gres srun conf site_catalog hf_config config_files http differential)

# Longest input per target: a little over the largest real file of its kind.
max_len() {
  case "$1" in
    differential) echo 64 ;;
    gres|srun) echo 1024 ;;
    llm_options|comment|request_json) echo 4096 ;;
    site_catalog) echo 24576 ;;
    *) echo 8192 ;;
  esac
}

# Runs per target in --ci: about 8 s each on the 2-core CI machine (exec/s measured there
# with the clang ASan+UBSan tree, tests/fuzz/README.md), about 90 s for all of them; the
# committed corpus and regressions carry what longer runs by hand found.
ci_runs() {
  case "$1" in
    srun) echo 300000 ;;         # ~44k exec/s
    gres|http) echo 225000 ;;    # ~31k
    hf_config) echo 200000 ;;    # ~27k
    request_json) echo 165000 ;; # ~22k
    conf|config_files) echo 75000 ;;  # ~10k
    comment) echo 70000 ;;       # ~9k
    llm_options) echo 60000 ;;   # ~8k
    differential) echo 14000 ;;  # ~1.8k
    site_catalog) echo 9000 ;;   # ~1.2k
    *) echo 50000 ;;
  esac
}

replay=0 ci=0
if [[ "${1:-}" == "--replay" ]]; then replay=1; shift; fi
if [[ "${1:-}" == "--ci" ]]; then ci=1; shift; fi
build="${1:?usage: run.sh [--replay] BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]}"
shift
seconds=0
if [[ $replay == 0 && $ci == 0 ]]; then seconds="${1:?usage: run.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]}"; shift; fi
seed=${TRAINFIT_FUZZ_SEED:-1}
[[ $ci == 1 ]] && echo "fuzz: seed $seed, fixed runs per target (TRAINFIT_FUZZ_SEED=$seed bash tests/fuzz/run.sh --ci $build repeats this)"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")

work="$(mktemp -d "${TMPDIR:-/tmp}/trainfit-fuzz.XXXXXX")"
failed=()
for name in "${targets[@]}"; do
  bin="$build/tests/fuzz/${name}_fuzz"
  if [[ ! -x "$bin" ]]; then echo "$name: no binary $bin (build with -DTRAINFIT_FUZZ=ON)"; failed+=("$name"); continue; fi
  log="$work/$name.log"
  if [[ $replay == 1 ]]; then
    mapfile -t inputs < <(find "$here/corpus/$name" "$here/regressions/$name" -type f 2>/dev/null | sort)
    mkdir -p "$work/artifacts/$name"
    if "$bin" -timeout=5 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/$name/" "${inputs[@]}" >"$log" 2>&1; then
      echo "$name: replayed ${#inputs[@]} inputs"
    else
      echo "$name: FAILED replaying (log: $log)"; tail -30 "$log"; failed+=("$name")
    fi
    continue
  fi
  corpus="$work/corpus/$name"
  mkdir -p "$corpus" "$work/artifacts/$name"
  cp "$here/corpus/$name"/* "$corpus"/ 2>/dev/null
  [[ -d "$here/regressions/$name" ]] && cp "$here/regressions/$name"/* "$corpus"/ 2>/dev/null
  dict=()  # the words of the target's grammar, where it has a dictionary (dict/NAME.dict)
  [[ -f "$here/dict/$name.dict" ]] && dict=(-dict="$here/dict/$name.dict")
  # --ci: -runs bounds the work, not the clock (a time bound makes the result depend on the
  # machine's speed); -max_total_time only guards against a machine far slower than CI's.
  bound=(-max_total_time="$seconds")
  [[ $ci == 1 ]] && bound=(-seed="$seed" -runs="$(ci_runs "$name")" -max_total_time=300)
  start=$SECONDS
  "$bin" "$corpus" "${bound[@]}" -timeout=5 -rss_limit_mb=2048 -max_len="$(max_len "$name")" \
    "${dict[@]}" -print_final_stats=1 -artifact_prefix="$work/artifacts/$name/" >"$log" 2>&1
  rc=$?
  took=$((SECONDS - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  files=$(find "$corpus" -type f | wc -l)
  printf '%-14s %4ss  execs %-10s exec/s %-7s cov %-6s ft %-6s corpus %s\n' "$name" "$took" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$files"
  if [[ $ci == 1 && ${execs:-0} -lt $(ci_runs "$name") && $rc == 0 ]]; then
    echo "$name: stopped by the 300 s guard after ${execs:-?} of $(ci_runs "$name") runs: this machine is far slower than CI's"
  fi
  if [[ $rc != 0 ]]; then
    echo "$name: FAILED (exit $rc; log $log; inputs in $work/artifacts/$name/)"
    grep -E 'ERROR|SUMMARY|runtime error|differential mismatch|Test unit written' "$log" | head -10
    failed+=("$name")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]} (kept: $work)"
  exit 1
fi
rm -rf "$work"
echo "fuzz: ${#targets[@]} target(s) passed"
