#!/usr/bin/env bash
# Builds trainfit's Debian packages (trainfit, trainfit-slurm, trainfit-doc) from this
# checkout's working tree with debhelper, into OUTDIR. Usage: packaging/build-deb.sh OUTDIR
# Needs the Build-Depends of packaging/debian/control (scripts/install-deps.sh installs them).
# JOBS (default 2): parallel compile jobs. KEEP=1 keeps the build tree (its path is printed).
# TRAINFIT_DEB_TESTS=1 also builds the tests in it (obj-*/, as tests/slurm/releases.sh runs them).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/trainfit-deb.XXXXXX)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
version=$(sed -n '1s/^trainfit (\([^-)]*\).*/\1/p' "$src/packaging/debian/changelog")
tree=$work/trainfit-$version
mkdir -p "$tree"
# The working tree as git sees it (tracked and new files, not ignored build dirs); a plain
# copy without build*/ where there is no git.
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z -co --exclude-standard | xargs -0 -r cp --parents -t "$tree" 2>/dev/null) || true
  # deleted-but-tracked files make cp complain; everything that exists is copied
else
  tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tree" -xf -
fi
cp -r "$tree/packaging/debian" "$tree/debian"
export DEB_BUILD_OPTIONS="parallel=${JOBS:-2} nocheck noddebs ${DEB_BUILD_OPTIONS:-}"
(cd "$tree" && dpkg-buildpackage -b -us -uc --no-sign) > "$work/build.log" 2>&1 || {
  tail -60 "$work/build.log" >&2
  echo "build-deb.sh: dpkg-buildpackage failed; full log: $work/build.log" >&2
  trap - EXIT
  exit 1
}
shopt -s nullglob
debs=("$work"/*.deb)
((${#debs[@]})) || { echo "build-deb.sh: no .deb produced; log: $work/build.log" >&2; trap - EXIT; exit 1; }
cp "${debs[@]}" "$work"/*.buildinfo "$work"/*.changes "$out"/ 2>/dev/null || cp "${debs[@]}" "$out"/
grep -E "^(dpkg-shlibdeps|dh_missing): " "$work/build.log" | grep -v "^dh_missing: usr/share/doc" >&2 || true
[[ ${KEEP:-0} == 1 ]] && echo "build tree: $work" >&2
for deb in "${debs[@]}"; do echo "$out/$(basename "$deb")"; done
