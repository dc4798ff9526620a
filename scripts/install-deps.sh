#!/usr/bin/env bash
# Installs what trainfit needs to build and test on Debian 12 (run as root).
set -euo pipefail
packages=(cmake ninja-build g++ nlohmann-json3-dev libboost-program-options-dev libyaml-cpp-dev libtomlplusplus-dev
          libgtest-dev libbenchmark-dev pkg-config curl libcurl4-openssl-dev openssl haproxy
          python3-torch libopenblas0-pthread libslurm-dev slurmctld slurmd slurm-client munge
          nginx-light chromium python3-websocket fonts-dejavu-core librsvg2-bin zlib1g-dev
          debhelper dpkg-dev fakeroot rpm logrotate man-db groff-base clang libclang-rt-14-dev mmdebstrap)
# mmdebstrap: tests/slurm/releases.sh makes a root filesystem per Debian suite (its Slurm release).
# clang, libclang-rt-14-dev: the libFuzzer targets (tests/fuzz); libclang-rt-14-dev holds libFuzzer and
# the sanitizer runtimes, only a Recommends of clang-14, which --no-install-recommends leaves out.
# man-db, groff-base: tests/man_test.sh renders the man pages (man/).
# debhelper, dpkg-dev, fakeroot: packaging/build-deb.sh; rpm: rpmbuild for packaging/rpm/trainfit.spec;
# logrotate: tests/install_test.sh rotates the audit log under a running plugin (packaging/logrotate).
# zlib1g-dev: `trainfit report` reads gzip-compressed rotated audit logs (docs/report.md).
# librsvg2-bin: rsvg-convert, for `trainfit plot --out FILE.png` and its test (docs/charts.md).
# chromium, python3-websocket, fonts-dejavu-core: tests/page_test.sh drives the service's page in headless
# chromium over the DevTools protocol (docs/service.md, "The page"); the fonts make the screenshots legible.
# haproxy (above), nginx-light: the load balancers of tests/service_pool_test.sh (conf/haproxy, conf/nginx).
# libcpp-httplib-dev: `trainfit serve` (docs/service.md); pkg-config finds it; curl drives tests/service_test.sh.
# libcurl4-openssl-dev: the client of the service (estimate --endpoint, the SPANK plugin's endpoint=);
# openssl and haproxy: tests/client_test.sh makes a CA and puts a real TLS terminator in front.
# libyaml-cpp-dev, libtomlplusplus-dev: torchtune recipes and torchtitan job files (--config, --llm-config).
# libopenblas0-pthread: without it python3-torch falls back to the reference BLAS and the
# fidelity harness runs ~20x slower (--no-install-recommends leaves it out).
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
