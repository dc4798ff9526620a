#!/bin/sh
# trainfit-slurm's removal guard, run by the package's prerm (Debian) and %preun (RPM) when
# the package is removed, not when it is upgraded. slurmctld exits at start when slurm.conf's
# JobSubmitPlugins names a plugin that is not there, and every sbatch, salloc and srun fails when plugstack.conf has a
# `required` line for a missing SPANK plugin: so while slurm.conf names job_submit/trainfit,
# or a plugstack.conf line names spank_trainfit.so as `required`, the removal is refused
# (exit 1, one message saying what to edit first); an `optional` line only warns.
# TRAINFIT_FORCE_REMOVE=1 removes anyway. docs/slurm.md, "Uninstalling and upgrading Slurm".
#
# Usage: removal-guard.sh [check]           the guard (exit 0: go ahead, 1: refuse)
#        removal-guard.sh job-submit FILE   JobSubmitPlugins as Slurm reads FILE (tests)
#        removal-guard.sh spank FILE        "required|optional FILE" for each spank_trainfit.so line
#
# slurm.conf is read the way Slurm reads it (src/common/parse_config.c at slurm-22-05-8-1):
# '#' starts a comment unless escaped; a line ending in an odd number of backslashes goes on
# on the next; escapes are then dropped; keys are case-insensitive, with blanks allowed around
# '=' (keyvalue_pattern), a value is "quoted" or runs to a blank; the last setting wins
# (_handle_common); `Include FILE` (any case, at the line's start) reads FILE in place,
# relative to the including file's directory, %c standing for ClusterName set before it.
# JobSubmitPlugins is a comma list whose names may carry "job_submit/"
# (src/slurmctld/job_submit.c, job_submit_plugin_init); it counts where slurmctld is installed
# (a fatal "failed to initialize job_submit plugin" at start: src/slurmctld/controller.c).
set -u

tf_plugin=trainfit
tf_spank_so=spank_trainfit.so
tf_force_var=TRAINFIT_FORCE_REMOVE
tf_max_depth=16  # Include nesting followed; a loop stops here

# The directory of FILE, where its relative Includes are read from ("." for a bare name).
tf_dir_of() { case $1 in */*) echo "${1%/*}" ;; *) echo . ;; esac; }

# slurm.conf's logical lines: comments cut, continuations joined, escapes dropped.
tf_conf_lines() {
  sed -E -e ':join' \
    -e 's/^(([^\\#]|\\.)*)#.*$/\1/' \
    -e '/(^|[^\\])(\\\\)*\\[[:space:]]*$/{' -e 's/\\[[:space:]]*$//' -e '$!{' -e 'N' -e 's/\n//' -e 'b join' -e '}' -e '}' \
    -e 's/\\(.|$)/\1/g' "$1"
}

# The settings the guard needs, one "key value" line each (key lower-cased), and
# "include PATH" for Include lines, in file order.
tf_conf_records() {
  tf_conf_lines "$1" | sed -E -n \
    -e 's/^include[[:space:]]+([^[:space:]]+).*$/include \1/Ip' -e 't' \
    -e 's/^[[:space:]]*([[:alnum:]_.]+)[[:space:]]*[-*+/]?=[[:space:]]*("([^"]*)"|([^[:space:]]+))([[:space:]].*)?$/\L\1\E \3\4/' \
    -e '/^(jobsubmitplugins|plugstackconfig|clustername) /p'
}

# FILE DEPTH CLUSTER: FILE's records with its Includes read in place.
tf_conf_walk() {
  if [ "$2" -gt "$tf_max_depth" ]; then
    echo "warning $1: Include nested deeper than $tf_max_depth, not read"; return
  fi
  if [ ! -r "$1" ]; then echo "warning $1: cannot be read, not checked"; return; fi
  cluster=$3
  tf_conf_records "$1" | while read -r key value; do
    case $key in
      clustername) cluster=$(printf '%s' "$value" | tr '[:upper:]' '[:lower:]'); echo "$key $value" ;;
      include)
        path=$(printf '%s' "$value" | sed "s|%c|$cluster|g")
        case $path in /*) ;; *) path=$(tf_dir_of "$1")/$path ;; esac
        (tf_conf_walk "$path" $(($2 + 1)) "$cluster") ;;
      *) echo "$key $value" ;;
    esac
  done
}

# The JobSubmitPlugins value slurmctld uses (the last one), quotes left by the value dropped.
tf_job_submit() {
  tf_conf_walk "$1" 0 "" | sed -n 's/^jobsubmitplugins //p' | tail -n 1 | sed 's/^"//; s/"$//'
}

# Whether a JobSubmitPlugins value names this plugin.
tf_names_plugin() {
  old_ifs=$IFS; IFS=,
  for name in $1; do
    if [ "${name#job_submit/}" = "$tf_plugin" ]; then IFS=$old_ifs; return 0; fi
  done
  IFS=$old_ifs; return 1
}

# plugstack.conf (src/common/plugstack.c at slurm-22-05-8-1, _plugin_stack_parse_line): '#'
# starts a comment, words split on blanks, "required|optional PLUGIN ARGS" or "include GLOB"
# (relative to the including file's directory, _spank_conf_include).
tf_spank_walk() {
  [ "$2" -le "$tf_max_depth" ] && [ -r "$1" ] || return 0
  sed 's/#.*//' "$1" | while read -r kind plugin rest; do
    case $kind in
      required|optional) [ "${plugin##*/}" = "$tf_spank_so" ] && echo "$kind $1" ;;
      include)
        case $plugin in /*) glob=$plugin ;; *) glob=$(tf_dir_of "$1")/$plugin ;; esac
        for f in $glob; do [ -f "$f" ] && (tf_spank_walk "$f" $(($2 + 1))); done ;;
    esac
  done
  return 0
}

# PlugStackConfig, else plugstack.conf beside slurm.conf (read_config.c, get_extra_conf_path).
tf_plugstack_path() {
  path=$(tf_conf_walk "$1" 0 "" | sed -n 's/^plugstackconfig //p' | tail -n 1 | sed 's/^"//; s/"$//')
  [ -n "$path" ] && echo "$path" || echo "$(tf_dir_of "$1")/plugstack.conf"
}

tf_check() {
  conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
  [ -e "$conf" ] || return 0
  tf_conf_walk "$conf" 0 "" | sed -n 's/^warning /trainfit-slurm: warning: /p' >&2
  edits=""
  plugins=$(tf_job_submit "$conf")
  # Only slurmctld loads job_submit plugins: a login or compute node may drop them.
  if command -v slurmctld >/dev/null 2>&1 && tf_names_plugin "$plugins"; then
    edits="remove $tf_plugin from JobSubmitPlugins=$plugins in $conf (slurmctld does not start without the plugin)"
  fi
  spank=$(tf_spank_walk "$(tf_plugstack_path "$conf")" 0)
  for file in $(printf '%s\n' "$spank" | sed -n 's/^required //p'); do
    edits="${edits:+$edits; }remove the 'required ... $tf_spank_so' line from $file (every sbatch, salloc and srun fails without the plugin)"
  done
  for file in $(printf '%s\n' "$spank" | sed -n 's/^optional //p'); do
    echo "trainfit-slurm: warning: $file still has an 'optional ... $tf_spank_so' line; sbatch, salloc and srun ignore it once the plugin is gone: remove it" >&2
  done
  [ -n "$edits" ] || return 0
  force=$(printenv "$tf_force_var" || true)
  if [ "$force" = 1 ]; then
    echo "trainfit-slurm: warning: $tf_force_var=1: removing although Slurm still uses the plugins: $edits" >&2
    return 0
  fi
  echo "trainfit-slurm: refusing to remove while Slurm uses the plugins. First $edits, then restart slurmctld and remove the package again; $tf_force_var=1 removes it anyway. /usr/share/doc/trainfit/slurm.md, \"Uninstalling and upgrading Slurm\"" >&2
  return 1
}

case ${1:-check} in
  check) tf_check ;;
  job-submit) tf_job_submit "$2" ;;
  spank) tf_spank_walk "$2" 0 ;;
  *) echo "usage: $0 [check | job-submit SLURM_CONF | spank PLUGSTACK_CONF]" >&2; exit 2 ;;
esac
