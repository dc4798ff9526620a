#!/usr/bin/env bash
# scripts/demo.sh as a newcomer runs it (on this build tree, TRAINFIT_DEMO_BUILD): the accepted
# job shows slurmctld's verdict (--llm-check), the rejected one its min_gpus_to_fit, the
# resized one its new size, it ends with `trainfit report`, and at exit it has stopped what it
# started (munged only if it started it) and removed its working directory.
# Usage: demo_test.sh BUILD_DIR   (root: it runs a loopback Slurm cluster)
set -uo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/slurm/checks.sh"   # ok, fail, summary
munged_before=$(pgrep -x munged | sort)
out=$(TRAINFIT_DEMO_BUILD=$build timeout 300 bash "$here/../scripts/demo.sh" 2>&1); rc=$?
[[ $rc -eq 0 ]] && ok "demo.sh exits 0" || fail "demo.sh exit status" "rc=$rc" "$(tail -20 <<<"$out")"
accepted=$(grep -A3 -- '--llm-model=llama3-8b' <<<"$out")
[[ $accepted == *"trainfit: fits: llama3-8b at seq 4096"* && $accepted == *"Submitted batch job"* ]] \
  && ok "the accepted job shows slurmctld's verdict (--llm-check)" || fail "accepted job" "$accepted"
# The gate's count: the likely range's high end on the demo's 64-GPU node (resize_to = high), from the CLI.
want=$("$build/cli/trainfit" min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full \
       --gpu h100 --gpus-per-node 64 2>/dev/null)
grep -q "sbatch: error: trainfit: llama3-70b at seq 8192 needs .*min_gpus_to_fit=$want for the likely high end" <<<"$out" \
  && ok "the rejected job names min_gpus_to_fit ($want on the demo's 64-GPU node)" || fail "rejected job" "$out"
grep -q "resized from 8 to $want x H100" <<<"$out" && ok "the resized job says its new size" || fail "resized job" "$out"
report=$(sed -n '/ report --audit /,$p' <<<"$out")
[[ $report == *llama3-70b* && $report == *llama3-8b* && $report == *reject* ]] && ok "it ends with trainfit report over the audit log" || fail "report at the end" "$report"
dir=$(sed -n 's/^== working in \(.*\) (removed at exit)$/\1/p' <<<"$out")
[[ -n $dir && ! -e $dir ]] && ok "its working directory is removed" || fail "working directory left" "dir='$dir'"
[[ "$(pgrep -x munged | sort)" == "$munged_before" ]] && ok "munged as before the demo" || fail "munged" "before: '$munged_before' after: '$(pgrep -x munged)'"
! pgrep -f "slurm(ctld|d) -f $dir/slurm.conf" >/dev/null && ok "its slurmctld and slurmd are stopped" || fail "daemons left"
echo "$pass passed, $failures failed"
((failures == 0))
