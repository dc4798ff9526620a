#!/bin/sh
# Prints the release of the Slurm whose headers trainfit's plugins are built against
# ("22.05.8", from SLURM_VERSION_NUMBER); with "next", the release after it ("22.05.9").
# Used by debian/rules and rpm/trainfit.spec to name and pin trainfit-slurm.
set -e
header=${SLURM_INCLUDE_DIR:-/usr/include}/slurm/slurm_version.h
n=$(sed -n 's/^#define SLURM_VERSION_NUMBER[ \t]*\(0x[0-9a-fA-F]*\).*/\1/p' "$header")
[ -n "$n" ] || { echo "slurm-version.sh: no SLURM_VERSION_NUMBER in $header" >&2; exit 1; }
micro=$((n & 255))
[ "${1:-}" = next ] && micro=$((micro + 1))
printf '%d.%02d.%d\n' $((n >> 16 & 255)) $((n >> 8 & 255)) "$micro"
