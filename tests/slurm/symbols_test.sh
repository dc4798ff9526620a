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
  slurm_spank_init_post_opt slurm_spank_local_user_init slurm_spank_exit
check trainfit_config_reader.so trainfit_read_config
# What every sbatch, salloc, srun and slurmstepd loads with the SPANK plugin: no C++ runtime
# (libstdc++ is inside; yaml-cpp and Debian's libstdc++ come with trainfit_config_reader.so,
# dlopen'ed for --llm-config only).
needed=$(readelf -d "$dir/spank_trainfit.so" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | grep -vE '^(libc|libm|ld-linux-x86-64)\.so' | tr '\n' ' ')
if [[ -z $needed ]]; then echo "ok   spank_trainfit.so needs no library beyond libc and libm"
else echo "FAIL spank_trainfit.so needs at load: $needed"; failures=$((failures + 1)); fi
# job_submit runs inside slurmctld and always computes in-process: no libcurl, linked,
# referenced or named for dlopen (the client of the service is the SPANK plugin's and the CLI's).
curl_uses() {  # curl_uses PLUGIN: what of libcurl it needs at load, refers to, or names for dlopen
  local so=$dir/$1
  { readelf -d "$so" | grep -i 'NEEDED.*curl'; nm -D "$so" | grep -i ' curl_'; strings "$so" | grep -o 'libcurl\.so\.4$'; } | tr '\n' ' '
}
uses=$(curl_uses job_submit_trainfit.so)
if [[ -z $uses ]]; then echo "ok   job_submit_trainfit.so has no libcurl"
else echo "FAIL job_submit_trainfit.so uses libcurl: $uses"; failures=$((failures + 1)); fi
# The SPANK plugin loads it when endpoint= is first used, never at load: every sbatch, salloc
# and srun loads the plugin (and a linked libcurl's 30 libraries with it). Its dlopen name is
# the proof that the check above can fail.
uses=$(curl_uses spank_trainfit.so)
if [[ $uses == "libcurl.so.4 " ]]; then echo "ok   spank_trainfit.so loads libcurl only when asked (dlopen)"
else echo "FAIL spank_trainfit.so: libcurl linked or not named for dlopen: '$uses'"; failures=$((failures + 1)); fi
echo "$((6 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
