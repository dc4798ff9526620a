#!/usr/bin/env bash
# trainfit built, packaged and proved on the Slurm release of a Debian suite, as an
# administrator of that release would get it (docs/slurm.md, "Slurm releases"):
#   bash tests/slurm/releases.sh SUITE...            bookworm (Slurm 22.05), trixie (24.11), sid (26.05)
#   bash tests/slurm/releases.sh --prepare SUITE...  only make the root filesystems (CI starts this early)
#   bash tests/slurm/releases.sh --bench SUITE...    the job_submit benchmarks instead (docs/slurm.md)
#   bash tests/slurm/releases.sh --parallel SUITE... the suites at once (CI: one's Slurm suites,
#       which mostly wait on slurmctld, overlap the other's compile); each log printed whole
#       when all are done
# For each suite: a root filesystem made with mmdebstrap from Debian's archive holding that
# release's slurmctld, slurmd, munge, libslurm-dev and the build dependencies
# (tests/slurm/rootfs-packages), cached in $TRAINFIT_ROOTFS_CACHE (default
# /var/cache/trainfit/rootfs) under the suite and a hash of the package list, made again when
# missing. Each run gets a fresh overlay of it, in its own PID, mount and network namespaces (a
# plain chroot shares PIDs: a pgrep or kill of munged there reaches the host's), and runs
# tests/slurm/in_release.sh inside: the packages built against that release's headers, the
# tests built in the same tree and run on that release's own slurmctld/slurmd, the packages
# installed and tested. Packages and logs: $TRAINFIT_RELEASES_OUT/SUITE (default build-releases/).
# Root only (mmdebstrap, unshare, mount). Exit status: 0 when every suite passed.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${TRAINFIT_ROOTFS_CACHE:-/var/cache/trainfit/rootfs}
out_base=${TRAINFIT_RELEASES_OUT:-$src/build-releases}
list=$src/tests/slurm/rootfs-packages

prepare=0 bench=0 parallel=0
if [[ ${1:-} == --prepare ]]; then prepare=1; shift; fi
if [[ ${1:-} == --parallel ]]; then parallel=1; shift; fi
if [[ ${1:-} == --bench ]]; then bench=1; shift; fi
(($#)) || { echo "usage: $0 [--prepare] SUITE..." >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "releases.sh: needs root (mmdebstrap, unshare, mount)" >&2; exit 2; }

packages() { grep -v -e '^#' -e '^$' "$list" | paste -sd, -; }

# The suite's root filesystem, made when missing; prints its path. Concurrent callers
# (--prepare in the background, then a run) wait for each other on a lock.
rootfs() {
  local suite=$1 key root log
  key=$(printf '%s\n%s\n' "$suite" "$(packages)" | sha256sum | cut -c1-12)
  root=$cache/$suite-$key
  mkdir -p "$cache"
  exec {lock}>"$cache/$suite.lock"
  flock "$lock"
  if [[ ! -f $root/.complete ]]; then
    log=$cache/$suite-$key.log
    rm -rf "$root.partial"
    local opts=(--variant=apt --include="$(packages)")
    # unstable's Release file may be past its Valid-Until on a mirror that is not refreshed.
    [[ $suite == sid || $suite == unstable ]] && opts+=(--aptopt='Acquire::Check-Valid-Until "false"')
    local start=$SECONDS
    if ! mmdebstrap "${opts[@]}" "$suite" "$root.partial" >"$log" 2>&1; then
      echo "releases.sh: mmdebstrap $suite failed (log: $log)" >&2
      tail -20 "$log" >&2
      exec {lock}>&-
      return 1
    fi
    touch "$root.partial/.complete"
    mv "$root.partial" "$root"
    # Roots of the same suite made for an older package list are no longer used.
    find "$cache" -maxdepth 1 -name "$suite-*" -not -name "$suite-$key*" -not -name "$suite.lock" -exec rm -rf {} +
    echo "releases.sh: $suite root filesystem made in $((SECONDS - start)) s ($(du -sh "$root" | cut -f1))" >&2
  fi
  exec {lock}>&-
  echo "$root"
}

# One run on a fresh overlay of the suite's root: nothing it does stays in the cache.
run_suite() {
  local suite=$1 port_base=$2 root run out rc
  root=$(rootfs "$suite") || return 1
  out=$out_base/$suite
  rm -rf "$out"; mkdir -p "$out"
  run=$(mktemp -d "/tmp/trainfit-release-$suite.XXXXXX")
  mkdir -p "$run"/{upper/src,upper/etc,work,merged}
  # The working tree as git sees it (tracked and new files, not ignored build dirs).
  (cd "$src" && git ls-files -z -co --exclude-standard | xargs -0 -r cp --parents -t "$run/upper/src" 2>/dev/null) || true
  cp /etc/hosts "$run/upper/etc/hosts"  # slurmctld and the clients resolve localhost
  # The host's network namespace: 24.11's slurmctld resolves its listening address with
  # AI_ADDRCONFIG, which finds nothing where loopback is the only interface. Its clusters
  # take ports from port_base: 12000-19999 and 20000-27999 (tests/slurm/cluster.sh uses 8000
  # from its base), below the kernel's ephemeral range; the host's own Slurm tests (also
  # from 20000) do not run at the same time.
  unshare --pid --fork --mount --uts bash -c '
    set -e
    run=$1 root=$2 out=$3
    mount --make-rprivate /
    mount -t overlay overlay -o "lowerdir=$root,upperdir=$run/upper,workdir=$run/work" "$run/merged"
    mount -t proc proc "$run/merged/proc"
    mount --rbind /dev "$run/merged/dev"
    mkdir -p "$run/merged/out" && mount --bind "$out" "$run/merged/out"
    hostname "trainfit-$(basename "$root" | cut -d- -f1)"
    exec chroot "$run/merged" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      JOBS="$(nproc)" BENCH=$4 TRAINFIT_CLUSTER_PORT_BASE=$5 bash /src/tests/slurm/in_release.sh
  ' release "$run" "$root" "$out" "$bench" "$port_base" 2>&1 | tee "$out/run.log"
  rc=${PIPESTATUS[0]}
  rm -rf "$run"
  return "$rc"
}

failed=()
if ((prepare)); then
  for suite in "$@"; do rootfs "$suite" >/dev/null || failed+=("$suite"); done
elif ((parallel)); then
  pids=() starts=() i=0
  for suite in "$@"; do
    mkdir -p "$out_base"
    run_suite "$suite" $((12000 + 8000 * (i % 2))) >"$out_base/$suite.log" 2>&1 &
    pids+=($!) starts+=("$SECONDS") i=$((i + 1))
  done
  i=0
  for suite in "$@"; do
    wait "${pids[$i]}" || failed+=("$suite")
    echo "==== $suite ===="
    cat "$out_base/$suite.log"
    echo "==== $suite: $( [[ " ${failed[*]} " == *" $suite "* ]] && echo FAILED || echo passed ) ($((SECONDS - ${starts[$i]})) s or less, at once with the others)"
    i=$((i + 1))
  done
else
  for suite in "$@"; do
    start=$SECONDS
    echo "==== $suite ===="
    run_suite "$suite" 12000 || failed+=("$suite")
    echo "==== $suite: $( [[ " ${failed[*]} " == *" $suite "* ]] && echo FAILED || echo passed ) in $((SECONDS - start)) s"
  done
fi
if ((${#failed[@]})); then
  echo "releases.sh: failed: ${failed[*]}"
  exit 1
fi
