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
# job_submit runs inside slurmctld and always computes in-process: no libcurl, linked or
# referenced (the client of the service is the SPANK plugin's and the CLI's only).
no_curl() {  # no_curl PLUGIN
  local so=$dir/$1 needed refs
  needed=$(readelf -d "$so" | grep -i 'NEEDED.*curl')
  refs=$(nm -D "$so" | grep -i ' curl_')
  if [[ -z $needed && -z $refs ]]; then echo "ok   $1 has no libcurl"
  else echo "FAIL $1 links libcurl: $needed $refs"; failures=$((failures + 1)); fi
}
no_curl job_submit_trainfit.so
# The SPANK plugin does link it (endpoint=): proof that the check above can fail.
if readelf -d "$dir/spank_trainfit.so" | grep -q 'NEEDED.*libcurl'; then echo "ok   spank_trainfit.so links libcurl"
else echo "FAIL spank_trainfit.so does not link libcurl (endpoint= cannot work)"; failures=$((failures + 1)); fi
echo "$((4 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
