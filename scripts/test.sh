#!/usr/bin/env bash
# One command, fresh Debian 12: install dependencies, build, run every test; CI runs this.
#   bash scripts/test.sh            everything (cold, 2 cores: see README, "Tests")
#   bash scripts/test.sh --quick    the day-to-day subset: incremental build, ctest -L quick
# Ends with a table of each stage's duration. Test stages that fail do not stop the ones
# after them (one run tells everything); the exit status is 1 when any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
jobs=$(nproc)

source scripts/stages.sh   # stage, stage_table
must() { stage "$@" || { stage_table; exit 1; }; }  # a stage the later ones cannot do without

if [[ ${1:-} == --quick ]]; then
  must "build (build/, incremental)" bash scripts/build.sh
  stage "ctest -L quick" ctest --test-dir build --output-on-failure --parallel "$jobs" -L quick
  stage_table
  ((${#stages_failed[@]} == 0)); exit
fi

must "install dependencies" bash scripts/install-deps.sh
# Tests write only under their own temporary directories: the system's Slurm log dir is
# compared before and after (tests/slurm/cluster.sh runs its daemons with a private one).
system_paths_marker=$(mktemp)
untouched() {  # untouched MARKER DIR...: nothing in DIR changed since MARKER was made
  local changed
  changed=$(find "${@:2}" -newer "$1" 2>/dev/null)
  [[ -z $changed ]] || { echo "written by the tests: $changed"; return 1; }
}
# The Slurm release roots (tests/slurm/releases.sh) download and unpack while the host builds.
releases=(trixie sid)
mkdir -p build-releases
bash tests/slurm/releases.sh --prepare "${releases[@]}" > build-releases/prepare.log 2>&1 &
prepare_pid=$!

must "build (build/, Release)" bash scripts/build.sh
# ctest 'install' too: the packages as an administrator gets them (build-deb.sh, dpkg -i, a
# fresh Slurm on the INSTALLED plugins, rpmbuild -ta), purged at exit (tests/install_test.sh).
cmake -S . -B build -DTRAINFIT_INSTALL_TEST=ON >/dev/null
stage "ctest (Release, Slurm 22.05 here)" ctest --test-dir build --output-on-failure --parallel "$jobs"

# One clang tree serves the sanitizer pass and the fuzzers: everything in it is built with
# ASan + UBSan and libFuzzer's coverage hooks (tests/fuzz/options.cmake).
CC=clang CXX=clang++ cmake -S . -B build-sanitize -G Ninja -DTRAINFIT_FUZZ=ON -DTRAINFIT_BUILD_BENCH=OFF >/dev/null
must "build (build-sanitize/, clang ASan+UBSan+fuzz)" \
  cmake --build build-sanitize --parallel "$jobs" --target trainfit_tests trainfit_serve_tests trainfit_report_tests trainfit_plot_tests trainfit trainfit_man plugin_host trainfit_fuzz
# The library, the CLI and the plugins (loaded by tests/plugin_host) under ASan + UBSan. Not
# here: the Slurm suites (sanitizers do not load into slurmctld), and what only repeats the
# release pass's timing and browser checks through the same code (README, "Tests"), and the
# package's removal guard (a shell script; its checker reads slurm.conf through libslurm, whose
# reader returns nothing under the sanitizers' runtime).
stage "ctest (ASan+UBSan)" ctest --test-dir build-sanitize --output-on-failure --parallel "$jobs" \
  -E "^(fidelity|slurm_.*|plugin_symbols|page|service_pool|client|published_gpu|doc_test|fuzz_regressions|citations|readme|demo|removal_guard)$"
# ThreadSanitizer on what runs threads: the audit writer, the catalog and policy watcher under
# concurrent decisions and reloads (tests/plugin_host), and the service's event loops with its
# SIGHUP reload and access-log reopening. Any report fails the test that ran it. Not here:
# service_hostile, whose latency bound (p99 under hostile load) TSan's slowdown breaks.
CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DTRAINFIT_TSAN=ON -DTRAINFIT_BUILD_BENCH=OFF >/dev/null
if stage "build (build-tsan/, clang ThreadSanitizer)" \
     cmake --build build-tsan --parallel "$jobs" --target trainfit_tests trainfit plugin_host; then
  stage "ctest (TSan: threads)" env TSAN_OPTIONS="halt_on_error=1 exitcode=66" ctest --test-dir build-tsan \
    --output-on-failure -R "^(plugin_host|service|site_catalog)$|^Audit|^Catalog|^Robustness"
fi
# libFuzzer on every parser (tests/fuzz/README.md): a fixed seed and a fixed number of runs
# per target over the committed corpus, so that a commit always gets the same answer; then
# every committed seed and regression input replayed.
stage "fuzz (fixed seed, fixed runs)" bash tests/fuzz/run.sh --ci build-sanitize
stage "fuzz regressions replayed" bash tests/fuzz/run.sh --replay build-sanitize

# Slurm 24.11 (Debian 13) and 26.05 (unstable): packages and the Slurm suites on each, the
# two at once (one's Slurm suites, which mostly wait, overlap the other's compile).
wait "$prepare_pid" || { echo "releases.sh --prepare failed:"; tail -20 build-releases/prepare.log; }
stage "releases ${releases[*]} at once (tests/slurm/releases.sh)" bash tests/slurm/releases.sh --parallel "${releases[@]}"
stage "no test wrote to /var/log/slurm, /usr/local/etc" untouched "$system_paths_marker" /var/log/slurm /usr/local/etc
stage_table
((${#stages_failed[@]} == 0))
