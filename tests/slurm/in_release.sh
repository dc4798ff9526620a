#!/usr/bin/env bash
# Runs inside a release's root filesystem (tests/slurm/releases.sh makes it and enters it):
# the source at /src, results to /out. One compile serves the packages and the tests:
#   1. packaging/build-deb.sh against this release's headers, the tests built in the same tree;
#   2. ctest in that tree: the unit tests, the CLI's, and every Slurm suite on this release's
#      own slurmctld/slurmd (integration, storm, faults, symbols, the plugins in a host);
#   3. tests/install_test.sh on the packages just built (dpkg -i, a fresh cluster on the
#      installed plugins, no PluginDir);
#   4. with BENCH=1 (releases.sh --bench), instead, the job_submit path's benchmarks on it:
#      bench/admission_bench (the plugin dlopen'ed, Google Benchmark) and
#      bench/slurm_submit_bench.sh (slurmctld with and without the plugin).
# Ends with a table of each step's duration (scripts/stages.sh).
set -uo pipefail
cd /src
slurm=$(sh packaging/slurm-version.sh)
echo "in_release: Debian $(cat /etc/debian_version), Slurm $slurm ($(slurmctld -V)), g++ $(g++ -dumpversion)"

source scripts/stages.sh   # stage, stage_table

build_packages() {
  KEEP=1 TRAINFIT_DEB_TESTS=1 JOBS=${JOBS:-2} bash packaging/build-deb.sh /out/debs 2>/out/build-deb.err
  local rc=$?
  cat /out/build-deb.err >&2
  tree=$(sed -n 's/^build tree: //p' /out/build-deb.err)
  obj=$(ls -d "$tree"/trainfit-*/obj-* 2>/dev/null | head -1)
  # mktemp made it 0700: the suites load the plugins from it as an ordinary user too.
  [[ -n $tree ]] && chmod a+rx "$tree"
  [[ $rc == 0 && -d $obj ]]
}

# What needs a browser, a load balancer, TLS, PyTorch or a quiet machine runs on the CI
# host (scripts/test.sh), and so do the checks of the repository itself (a git checkout:
# the package build tree is not one); here: what depends on the release's Slurm and libraries.
host_only='^(page|service_pool|service_hostile|client|fidelity|doc_test|install|citations|readme)$'
# The storm at a quarter of its size (2,400 forged submissions, 120 sbatch, 20 salloc/srun): the release's
# slurmctld under concurrent submissions and a restart; the full 10,000 runs on the host.
run_tests() {
  STORM_FORGE_PER_WORKER=600 STORM_SBATCH_PER_WORKER=60 STORM_OTHER=10 ctest --test-dir "$obj" --output-on-failure --output-log /out/ctest.log --parallel "${JOBS:-2}" -E "$host_only"
}

if [[ ${BENCH:-0} != 1 ]]; then
  stage "build packages + tests (Slurm $slurm)" build_packages || { stage_table "Slurm $slurm"; exit 1; }
  ls -l /out/debs/*.deb
  stage "ctest (unit, CLI, Slurm suites)" run_tests
  stage "install test (dpkg -i, installed plugins)" env TRAINFIT_DEBS=/out/debs TRAINFIT_RPM=0 bash tests/install_test.sh /out/install
fi

# A Release tree of the benchmarks beside the packaged one (Debian's flags differ).
run_bench() {
  cmake -S /src -B /tmp/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINFIT_BUILD_TESTS=OFF >/dev/null &&
    cmake --build /tmp/bench --parallel "${JOBS:-2}" --target admission_bench submit_jobs >/dev/null &&
    /tmp/bench/bench/admission_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_filter='JobSubmit' 2>&1 | tee /out/admission_bench.txt &&
    bash bench/slurm_submit_bench.sh /tmp/bench 1000 4 | tee /out/slurm_submit_bench.txt
}
[[ ${BENCH:-0} == 1 ]] && stage "benchmarks (job_submit path)" run_bench

stage_table "Slurm $slurm"
((${#stages_failed[@]} == 0))
