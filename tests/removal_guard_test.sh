#!/usr/bin/env bash
# trainfit-slurm's removal guard (packaging/slurm/removal-guard.sh, run by prerm and %preun with /bin/sh):
# its reading of slurm.conf held to libslurm's own (slurm_conf_read: slurm_conf_init, the
# parser slurmctld uses) on tricky texts — comments, escapes, continuations, case, blanks
# around '=', quotes, the last setting winning, Includes with %c — and its verdicts: refuse
# while JobSubmitPlugins names trainfit or a `required` plugstack line names spank_trainfit.so
# (one message saying what to edit), warn on an `optional` one, TRAINFIT_FORCE_REMOVE=1.
# Usage: removal_guard_test.sh GUARD SLURM_CONF_READ
set -u
guard=$1 slurm_read=$2
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin  # as dpkg runs maintainer scripts (it requires them)
dir=$(mktemp -d /tmp/trainfit-guard.XXXXXX)
source "$(dirname "$0")/slurm/checks.sh"
trap 'checks_finish true' EXIT

# A slurm.conf that libslurm reads without a fatal error, with TEXT after its two required lines.
conf=$dir/slurm.conf
write_conf() { printf 'ClusterName=Blue\nSlurmctldHost=localhost\n%s' "$1" > "$conf"; }
slurm_says() { "$slurm_read" "$conf" 2>&1 | sed -n "s/^$1=//p"; }

# name | slurm.conf text after ClusterName and SlurmctldHost | whether Slurm's value names trainfit
cases=(
  "plain|JobSubmitPlugins=trainfit|yes"
  "commented out|#JobSubmitPlugins=trainfit|no"
  "a list, a comment after it|JobSubmitPlugins=lua,trainfit # the gate|yes"
  "lower case, blanks around =|jobsubmitplugins = trainfit|yes"
  "upper case, another plugin|  JOBSUBMITPLUGINS  =   lua|no"
  "quoted list|JobSubmitPlugins=\"lua,trainfit\"|yes"
  "the last setting wins (off)|JobSubmitPlugins=trainfit
JobSubmitPlugins=lua|no"
  "the last setting wins (on)|JobSubmitPlugins=lua
jobsubmitplugins=trainfit|yes"
  "continued on the next line|JobSubmitPlugins=lua\\
,trainfit|yes"
  "an escaped # is no comment|JobSubmitPlugins=lua\\#,trainfit|yes"
  "an escaped backslash before #|JobSubmitPlugins=lua\\\\#,trainfit|no"
  "job_submit/ prefix|JobSubmitPlugins=job_submit/trainfit|yes"
  "escapes inside the name|JobSubmitPlugins=tra\\inf\\it|yes"
  "another name containing it|JobSubmitPlugins=trainfit2,notrainfit|no"
  "+= operator|JobSubmitPlugins+=trainfit|yes"
  "Include, relative|Include extra.conf|yes"
  "INCLUDE with %c (ClusterName, lower-cased)|INCLUDE blue-%c.conf|yes"
  "an Include then a later setting|Include extra.conf
JobSubmitPlugins=lua|no"
)
printf 'JobSubmitPlugins=trainfit\n' > "$dir/extra.conf"
printf '# cluster blue\nJobSubmitPlugins = lua,trainfit\n' > "$dir/blue-blue.conf"
for c in "${cases[@]}"; do
  name=${c%%|*} names=${c##*|} text=${c#*|}; text=${text%|*}  # the text may hold newlines
  write_conf "$text
"
  slurm=$(slurm_says JobSubmitPlugins) ours=$(sh "$guard" job-submit "$conf")
  detail="slurm.conf: $(cat "$conf" | tr '\n' '~'); libslurm: [$slurm]; guard: [$ours]"
  check "JobSubmitPlugins as libslurm reads it: $name" test "$slurm" = "$ours"
  # The case's premise (from Slurm's rules), held to libslurm too: the comparison above
  # means something only where the value does name trainfit, or does not, as intended.
  case ",$slurm," in *,trainfit,*|*,job_submit/trainfit,*) said=yes ;; *) said=no ;; esac
  check "libslurm's value names trainfit: $names ($name)" test "$said" = "$names"
  SLURM_CONF=$conf sh "$guard" check > "$dir/out" 2>&1; rc=$?
  want=$([[ $names == yes ]] && echo 1 || echo 0)
  detail="rc=$rc $(cat "$dir/out")"; check "the guard $([[ $want == 1 ]] && echo refuses || echo allows): $name" test $rc -eq "$want"
done

# The refusal: one message naming the file, the value and what to do, then the override.
write_conf $'JobSubmitPlugins=lua,trainfit\n'
out=$(SLURM_CONF=$conf sh "$guard" check 2>&1); rc=$?
detail="rc=$rc $out"
check "refusal: one line naming $conf, JobSubmitPlugins=lua,trainfit, the restart and TRAINFIT_FORCE_REMOVE" \
  test $rc -eq 1 -a "$(wc -l <<<"$out")" -eq 1 -a -n "$(grep -F "JobSubmitPlugins=lua,trainfit in $conf" <<<"$out" | grep -F 'restart slurmctld' | grep -F 'TRAINFIT_FORCE_REMOVE=1')"
out=$(SLURM_CONF=$conf TRAINFIT_FORCE_REMOVE=1 sh "$guard" check 2>&1); rc=$?
detail="rc=$rc $out"; check "TRAINFIT_FORCE_REMOVE=1: allowed, with a warning" test $rc -eq 0 -a -n "$(grep -F warning <<<"$out")"
out=$(SLURM_CONF=$conf TRAINFIT_FORCE_REMOVE=yes sh "$guard" check 2>&1); rc=$?
detail="rc=$rc $out"; check "TRAINFIT_FORCE_REMOVE=yes is not 1: refused" test $rc -eq 1
# Only slurmctld loads job_submit: where there is none (a login node), nothing to refuse.
sbin_free=$(tr ':' '\n' <<<"$PATH" | grep -v sbin | paste -sd:)
out=$(SLURM_CONF=$conf PATH=$sbin_free sh "$guard" check 2>&1); rc=$?
detail="rc=$rc PATH=$sbin_free $out (slurmctld here: $(command -v slurmctld))"
check "no slurmctld on PATH: JobSubmitPlugins=trainfit does not refuse" test $rc -eq 0 -a -n "$(command -v slurmctld)"
out=$(SLURM_CONF=$dir/absent.conf sh "$guard" check 2>&1); rc=$?
detail="rc=$rc $out"; check "no slurm.conf: nothing to guard" test $rc -eq 0 -a -z "$out"
write_conf $'Include missing.conf\n'
out=$(SLURM_CONF=$conf sh "$guard" check 2>&1); rc=$?
detail="rc=$rc $out"; check "an unreadable Include: allowed, with a warning naming it" test $rc -eq 0 -a -n "$(grep -F "$dir/missing.conf" <<<"$out")"

# SLURM_CONF a bare name (relative to the current directory): its Include is read beside it.
write_conf $'Include extra.conf\n'
out=$(cd "$dir" && SLURM_CONF=slurm.conf sh "$guard" check 2>&1); rc=$?
detail="rc=$rc $out"; check "SLURM_CONF=slurm.conf (relative): its Include is followed, refused" test $rc -eq 1

# plugstack.conf: beside slurm.conf unless PlugStackConfig says otherwise (libslurm agrees on
# the setting); `required` refuses, `optional` warns, comments and other plugins do not count.
spank() {  # PLUGSTACK_TEXT -> the guard's rc and output, slurm.conf without JobSubmitPlugins
  write_conf ""
  printf '%s\n' "$1" > "$dir/plugstack.conf"
  out=$(SLURM_CONF=$conf sh "$guard" check 2>&1); rc=$?
}
so=/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_trainfit.so
spank "required $so conf=/etc/slurm/trainfit.conf"
detail="rc=$rc $out"; check "plugstack: a required line refuses, naming the file" test $rc -eq 1 -a -n "$(grep -F "$dir/plugstack.conf" <<<"$out")"
spank "required spank_trainfit.so"
detail="rc=$rc $out"; check "plugstack: a required line with a relative path refuses" test $rc -eq 1
spank "optional $so"
detail="rc=$rc $out"; check "plugstack: an optional line warns and allows" test $rc -eq 0 -a -n "$(grep -F warning <<<"$out" | grep -F optional)"
spank "#required $so
required /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_pyxis.so # spank_trainfit.so"
detail="rc=$rc $out"; check "plugstack: comments and other plugins do not count" test $rc -eq 0 -a -z "$out"
mkdir -p "$dir/plugstack.conf.d"
printf '\trequired\t%s\n' "$so" > "$dir/plugstack.conf.d/trainfit.conf"
spank "include plugstack.conf.d/*.conf"
detail="rc=$rc $out"; check "plugstack: include GLOB (relative) is followed" test $rc -eq 1 -a -n "$(grep -F "$dir/plugstack.conf.d/trainfit.conf" <<<"$out")"
printf 'required %s\n' "$so" > "$dir/elsewhere.conf"
write_conf "PlugStackConfig=$dir/elsewhere.conf
"
slurm=$(slurm_says PlugStackConfig)
out=$(SLURM_CONF=$conf sh "$guard" check 2>&1); rc=$?
detail="libslurm: [$slurm] rc=$rc $out"
check "PlugStackConfig (as libslurm reads it) is the plugstack file checked" test "$slurm" = "$dir/elsewhere.conf" -a $rc -eq 1 -a -n "$(grep -F "$dir/elsewhere.conf" <<<"$out")"
rm -f "$dir/plugstack.conf" "$dir/elsewhere.conf"
