#!/usr/bin/env bash
# One command, fresh Debian 12: install dependencies, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# ctest 'install' too: the packages as an administrator gets them (build-deb.sh, dpkg -i, a
# fresh Slurm on the INSTALLED plugins, rpmbuild -ta), purged at exit (tests/install_test.sh).
cmake -S . -B build -DTRAINFIT_INSTALL_TEST=ON >/dev/null
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
# The library, the CLI and their tests again under ASan + UBSan; the plugins too, loaded by
# tests/plugin_host (sanitizers do not load into slurmctld, so the Slurm tests stay out).
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTRAINFIT_SANITIZE=ON -DTRAINFIT_BUILD_BENCH=OFF >/dev/null
cmake --build build-sanitize --parallel "$(nproc)" --target trainfit_tests trainfit trainfit_man plugin_host
ctest --test-dir build-sanitize --output-on-failure --parallel "$(nproc)" -E "fidelity|slurm|plugin_symbols"
# libFuzzer + ASan + UBSan on every parser (tests/fuzz/README.md): 60 s per target on a copy of the
# seed corpora, then every committed seed and regression input replayed.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DTRAINFIT_FUZZ=ON -DTRAINFIT_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --parallel "$(nproc)" --target trainfit_fuzz
bash tests/fuzz/run.sh build-fuzz 60
ctest --test-dir build-fuzz --output-on-failure -R fuzz_regressions
