#!/usr/bin/env bash
# The plugins export only their own entry points: slurmctld and the clients export
# thousands of plain names (error, list_create, ...) that must not clash with ours.
set -u
dir=$1
failures=0
check() {  # check PLUGIN EXPECTED...
  local so=$dir/$1; shift
  local got want
  got=$(nm -D --defined-only "$so" | awk '{print $3}' | sort | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  if [[ "$got" == "$want" ]]; then echo "ok   $(basename "$so") exports: $got"
  else echo "FAIL $(basename "$so") exports: $got (wanted: $want)"; failures=$((failures + 1)); fi
}
check job_submit_trainfit.so plugin_name plugin_type plugin_version init fini job_submit job_modify
check spank_trainfit.so plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init \
  slurm_spank_init_post_opt slurm_spank_local_user_init
echo "$((2 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
