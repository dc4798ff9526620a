#!/usr/bin/env bash
# The packages as an administrator gets them (as root, on a throwaway machine: CI):
# packaging/build-deb.sh, dpkg -i, then a fresh loopback slurmctld + slurmd that loads the
# INSTALLED plugins (PluginDir left at Slurm's default, the SPANK line taken from the
# installed example), real sbatch submissions accepted, rejected and resized; the RPM built
# with rpmbuild -ta (--nodeps: its BuildRequires are RHEL's names) where rpmbuild exists and
# its file list checked. trainfit-slurm's removal guard: dpkg --purge refused while the
# cluster's slurm.conf names the plugin (JobSubmitPlugins, a required SPANK line), allowed once
# both are gone, or with TRAINFIT_FORCE_REMOVE=1; a reinstall over itself never refused. The packages are purged (dpkg --purge) and the user trainfit deleted
# (when this test created it) at exit, whatever happened.
# Usage: install_test.sh [WORKDIR]   (WORKDIR: where .deb/.rpm files are built, kept)
# TRAINFIT_DEBS=DIR, TRAINFIT_RPMS=DIR: use the packages already in DIR instead of building them (the build
# is most of the time: ~8 min each on 2 cores). TRAINFIT_RPM=0: skip the RPM.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
here=$src/tests
dir=$(mktemp -d /tmp/trainfit-install.XXXXXX)
chmod 755 "$dir"
work=$(mkdir -p "${1:-$dir/pkg}" && cd "${1:-$dir/pkg}" && pwd)
cd "$dir"  # accepted jobs write slurm-N.out into the submit directory: here, not the checkout
installed=(); made_user=0

source "$here/slurm/cluster.sh"   # cluster_start, cluster_stop (no PluginDir: the installed plugins)
source "$here/slurm/checks.sh"
finish() {
  cluster_stop "$dir"
  if ((${#installed[@]})); then
    # --purge: dpkg -r alone leaves the conffiles (/etc/logrotate.d/trainfit-slurm) and the unit's state.
    # (forced: the cluster's slurm.conf may still name the plugin when a check below failed)
    TRAINFIT_FORCE_REMOVE=1 dpkg --purge "${installed[@]}" >/dev/null 2>&1 || echo "install_test.sh: dpkg --purge ${installed[*]} failed" >&2
    for p in "${installed[@]}"; do
      st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
      [[ -z $st || $st == *not-installed* ]] || fail "$p not purged: $st"
    done
    [[ -e /etc/logrotate.d/trainfit-slurm ]] && fail "/etc/logrotate.d/trainfit-slurm left after purge"
  fi
  ((made_user)) && { userdel trainfit 2>/dev/null; groupdel trainfit 2>/dev/null; }
  return 0
}
trap 'checks_finish finish' EXIT

if [[ $(id -u) -ne 0 ]]; then fail "install_test.sh needs root (dpkg -i, munged, slurmctld)"; exit 1; fi
for p in trainfit trainfit-slurm trainfit-doc; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    fail "$p is already installed; this test installs and removes it: refusing"; exit 1
  fi
done
getent passwd trainfit >/dev/null || made_user=1

# ---- Build ----
slurm_version=$(sh "$src/packaging/slurm-version.sh")
slurm_next=$(sh "$src/packaging/slurm-version.sh" next)
if [[ -n ${TRAINFIT_DEBS:-} ]]; then
  debdir=$TRAINFIT_DEBS
else
  debdir=$work/deb
  start=$SECONDS
  if bash "$src/packaging/build-deb.sh" "$debdir" > "$dir/build-deb.out"; then
    ok "packaging/build-deb.sh built the packages ($((SECONDS - start)) s)"
  else
    fail "packaging/build-deb.sh" "$(tail -20 "$dir/build-deb.out")"; exit 1
  fi
fi
deb() { ls "$debdir"/"$1"_*.deb 2>/dev/null | head -1; }
for p in trainfit trainfit-slurm trainfit-doc; do
  [[ -n $(deb $p) ]] || { fail "no $p .deb in $debdir"; exit 1; }
done
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
detail=$(field trainfit-slurm Version)
check "trainfit-slurm's version names Slurm $slurm_version" \
  grep -qE "^[0-9.]+\+slurm$slurm_version-[0-9]+\$" <<<"$detail"
detail=$(field trainfit-slurm Depends)
check "trainfit-slurm depends on Slurm $slurm_version exactly (any Debian revision)" \
  grep -qF "slurm-wlm-basic-plugins (>= $slurm_version~), slurm-wlm-basic-plugins (<< $slurm_next~)" <<<"$detail"
# The real package that holds Slurm's plugins here (the name pinned above).
owner=$(dpkg -S "$(ls /usr/lib/*/slurm-wlm/auth_munge.so | head -1)" 2>/dev/null | cut -d: -f1)
detail="owner of auth_munge.so: $owner"; check "slurm-wlm-basic-plugins holds this Slurm's plugins" test "$owner" = slurm-wlm-basic-plugins
detail=$(field trainfit-doc Architecture); check "trainfit-doc is Architecture: all" test "$detail" = all
# What the CLI and the service point at comes with them: the unit's Documentation= names
# trainfit-doc's files, PNG plots need rsvg-convert (librsvg2-bin) — both recommended.
detail=$(field trainfit Recommends)
check "trainfit recommends trainfit-doc and librsvg2-bin" \
  test -n "$(grep -w trainfit-doc <<<"$detail")" -a -n "$(grep -w librsvg2-bin <<<"$detail")"

# ---- Install ----
out=$(dpkg -i "$(deb trainfit)" "$(deb trainfit-slurm)" "$(deb trainfit-doc)" 2>&1); rc=$?
installed=(trainfit-slurm trainfit-doc trainfit)
detail="rc=$rc $out"; check "dpkg -i of the three packages" test $rc -eq 0
((rc == 0)) || exit 1
plugindir=$(dirname "$(dpkg -L trainfit-slurm | grep '/job_submit_trainfit.so$')")
detail="$plugindir"; check "the plugins are in Slurm's plugin dir (beside auth_munge.so)" \
  test -f "$plugindir/auth_munge.so" -a -f "$plugindir/spank_trainfit.so" -a -f "$plugindir/job_submit_trainfit.so"
# The paths docs/slurm.md tells administrators to write are the installed ones.
doc_paths=$(grep -oE '/usr/lib[^ ]*/(spank|job_submit)_trainfit\.so' "$src/docs/slurm.md" | sort -u)
detail="docs/slurm.md names: $doc_paths"
check "docs/slurm.md names the installed plugin paths" test -n "$doc_paths" -a "$(for p in $doc_paths; do test -f "$p" || echo "$p"; done)" = ""
detail=$(command -v trainfit); check "trainfit is /usr/bin/trainfit" test "$detail" = /usr/bin/trainfit
version=$(sed -n 's/^project(trainfit VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
detail=$(/usr/bin/trainfit --version 2>&1); check "/usr/bin/trainfit --version" test "$detail" = "trainfit $version"
detail=$(getent passwd trainfit); check "postinst created the system user trainfit (no login shell)" \
  grep -qE '^trainfit:x:[0-9]{1,3}:.*:(/usr/sbin/nologin|/bin/false)$' <<<"$detail"
unit=$(dpkg -L trainfit | grep '/trainfit.service$')
detail="$unit"; check "trainfit.service installed in a systemd unit dir" test -f "$unit"
missing=""
for doc in $(sed -n 's/^Documentation=//p' "$unit"); do
  case $doc in
    man:*) page=${doc#man:}; man -w "${page%%(*}" >/dev/null 2>&1 || missing+=" $doc" ;;
    file://*) [[ -f ${doc#file://} ]] || missing+=" $doc" ;;
  esac
done
detail="missing:$missing"; check "the unit's Documentation= targets are installed" test -z "$missing"
if command -v systemd-analyze >/dev/null; then
  detail=$(systemd-analyze verify "$unit" 2>&1); check "systemd-analyze verify trainfit.service" test -z "$detail"
fi
detail=$(grep -E '^(User|ExecStart|NoNewPrivileges|ProtectSystem|ProtectHome|PrivateTmp)=' "$unit")
check "the unit: User=trainfit, loopback, hardened" test "$(grep -cE '^(User=trainfit|ExecStart=/usr/bin/trainfit serve .*|NoNewPrivileges=yes|ProtectSystem=strict|ProtectHome=yes|PrivateTmp=yes)$' <<<"$detail")" -eq 6 \
  -a -n "$(grep -x 'Environment=TRAINFIT_LISTEN=127.0.0.1:8080' "$unit")"
detail=$(ls /usr/share/doc/trainfit/ 2>&1); check "trainfit-doc: README and docs, uncompressed" test -f /usr/share/doc/trainfit/README.md -a -f /usr/share/doc/trainfit/slurm.md
examples=/usr/share/trainfit/examples
detail=$(/usr/bin/trainfit policy --conf $examples/trainfit.conf --partition elastic --model llama3-8b 2>&1)
check "the example trainfit.conf parses with the real parser" test $? -eq 0
# The keys the parser knows (its own tables: check-config --keys); each must be in the example,
# set to its default or as a commented example (tests/shipped_examples_test.cpp: which are active).
known=$(/usr/bin/trainfit check-config --keys | tr '\n' ' ')
missing=""
for key in $known; do
  case $key in
    gpu_alias.NAME) pattern='^#?gpu_alias\.[a-z0-9_]+ = ' ;;
    partition.NAME.KEY) pattern='^#?partition\.[a-z0-9_]+\.[a-z_]+ = ' ;;
    *) pattern="^#?$key = " ;;
  esac
  grep -qE "$pattern" $examples/trainfit.conf || missing+=" $key"
done
detail="known: $known; missing:$missing"
check "the example shows every key the parser knows" test -n "$known" -a -z "$missing"
detail=$(/usr/bin/trainfit check-config $examples/trainfit.conf 2>&1)
check "trainfit check-config passes on the shipped example" test $? -eq 0
# The man pages render from the installed files (man-db's index or not: by section and name).
for page in "1 trainfit" "5 trainfit.conf" "8 spank_trainfit"; do
  detail=$(MANWIDTH=100 man -P cat $page 2>&1 | head -40)
  check "man $page renders" grep -q "^NAME" <<<"$detail"
done
detail=$(MANWIDTH=100 man -P cat 5 trainfit.conf 2>&1)
check "man trainfit.conf documents every key the parser knows (audit_log, resize_max_gpus)" \
  grep -q "resize_max_gpus" <<<"$detail"
logrotate_conf=/etc/logrotate.d/trainfit-slurm
detail=$(cat $logrotate_conf 2>&1); check "logrotate: plain rotation of the audit log, no copytruncate" \
  test -f $logrotate_conf -a -z "$(grep -E '^\s*(copytruncate|postrotate)' $logrotate_conf)"
if command -v logrotate >/dev/null; then  # a real rotation: the plugin's writer must follow it (below)
  mkdir -p "$dir/logrotate"
  sed "s|^/var/log/slurm/trainfit-audit.jsonl|$dir/audit.jsonl|" $logrotate_conf > "$dir/logrotate/trainfit-slurm"
fi

# ---- A fresh cluster with the installed plugins ----
# tests/slurm/cluster.sh's cluster with no PluginDir (Slurm's default, where the package put
# the plugins); the SPANK line is the shipped one.
cat > "$dir/trainfit.conf" <<CONF
action = reject
default_gpu = h100
gpus_per_node = 64
resize_max_gpus = 64
default_partition = gpu
audit_log = $dir/audit.jsonl
partition.elastic.action = resize
CONF
# The SPANK snippet as the package ships it (active, to be linked into plugstack.conf.d), its
# one line pointed at this policy instead of /etc/slurm/trainfit.conf.
snippet=$examples/plugstack.conf.d/trainfit.conf
detail=$(cat "$snippet"); check "the shipped SPANK snippet is active and names the installed plugin" \
  test "$(grep -v '^#' "$snippet")" = "required $plugindir/spank_trainfit.so default_gpu=h100 conf=/etc/slurm/trainfit.conf"
grep -v '^#' "$snippet" | sed "s|conf=/etc/slurm/trainfit.conf|conf=$dir/trainfit.conf|" > "$dir/plugstack.conf"
chmod -R a+rX "$dir"
out=$(CLUSTER_NODES_CONF= cluster_start "$dir" "" trainfit 2>&1); rc=$?
export SLURM_CONF=$dir/slurm.conf
detail="$out $(tail -5 "$dir/log/slurmctld.log" 2>&1)"
check "slurmctld + slurmd up with the installed plugins, node idle" test $rc -eq 0
((rc == 0)) || exit 1
detail=$(grep -HnE "PluginDir|$src|/build|\.so" "$dir/slurm.conf" "$dir/plugstack.conf" | grep -v "^$dir/plugstack.conf:1:required $plugindir/spank_trainfit.so ")
check "no build-tree path and no PluginDir in slurm.conf / plugstack.conf" test -z "$detail"
detail=$(grep -m1 "job_submit/trainfit" "$dir/log/slurmctld.log")
check "slurmctld loaded job_submit/trainfit and read the policy" grep -q "$dir/trainfit.conf" <<<"$detail"

help=$(sbatch --help 2>&1)
for o in --llm-model --llm-seq --llm-zero --llm-recompute --llm-check; do
  detail=$(grep -- "--llm" <<<"$help" | head -3); check "sbatch --help lists $o" grep -q -- "$o" <<<"$help"
done

big=(--llm-model=llama3-70b --llm-seq=8192 --llm-zero=3 --llm-recompute=full)
min=$(/usr/bin/trainfit min-gpus --fit-bound likely_high --model llama3-70b --seq 8192 --zero 3 --recompute full --gpu h100 --gpus-per-node 64)
jobs() { squeue -h -a -o %i | wc -l; }
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-seq=4096 --llm-zero=3 --wrap "sleep 1" 2>&1); rc=$?
detail="rc=$rc $out"; check "accept: llama3-8b on 8 x H100, silently" test $rc -eq 0 -a "${out%% *}" = Submitted -a "$(wc -l <<<"$out")" -eq 1
before=$(jobs)
out=$(sbatch --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
detail="rc=$rc $out"
check "reject: llama3-70b seq 8192 on 8 x H100, min_gpus_to_fit=$min" \
  test $rc -eq 1 -a "$(jobs)" -eq "$before" -a -n "$(grep -F "min_gpus_to_fit=$min" <<<"$out")"
out=$(sbatch -H -p elastic --parsable --gpus=h100:8 "${big[@]}" --wrap true 2>&1); rc=$?
job=$(tail -1 <<<"$out")
tres=$(scontrol show job -o "$job" 2>/dev/null | grep -o 'TresPerJob=[^ ]*')
detail="rc=$rc $out; $tres"
check "resize: -p elastic, 8 -> $min GPUs" test $rc -eq 0 -a -n "$(grep -F "resized from 8 to $min" <<<"$out")" -a "${tres##*:}" = "$min"
scontrol cancel "$job" 2>/dev/null
before=$(jobs)
out=$(sbatch --gpus=h100:8 --llm-model=llama3-8b --llm-zero=7 --wrap true 2>&1); rc=$?
detail="rc=$rc $out"; check "the SPANK plugin refuses --llm-zero=7 in sbatch" test $rc -ne 0 -a "$(jobs)" -eq "$before"
# --llm-config: the installed plugin finds the installed reader module (libdir/trainfit).
out=$(sbatch -H --parsable --gpus=h100:8 --llm-config="$src/tests/fixtures/frameworks/torchtune_llama3_1_8B_full.yaml" \
        --wrap true 2>&1); rc=$?
detail="rc=$rc $out"; check "--llm-config (a torchtune YAML) read by the installed trainfit_config_reader.so" \
  test $rc -eq 0 -a -n "$(grep -F -- "--llm-config (torchtune): " <<<"$out")"
scontrol cancel "$(tail -1 <<<"$out")" 2>/dev/null
sleep 0.5
lines=$(wc -l < "$dir/audit.jsonl" 2>/dev/null || echo 0)
detail="lines=$lines"; check "the audit log has the reject and the resize" test "$lines" -ge 2

if [[ -f $dir/logrotate/trainfit-slurm ]]; then  # rotate under the running plugin: it follows
  logrotate -f -s "$dir/logrotate/status" "$dir/logrotate/trainfit-slurm" 2>"$dir/logrotate/err"
  rc=$?; sleep 1.2
  sbatch --gpus=h100:8 "${big[@]}" --wrap true >/dev/null 2>&1
  sleep 0.5
  detail="rc=$rc $(cat "$dir/logrotate/err"); $(echo "$dir"/audit*)"
  check "after logrotate the plugin writes a new audit log, the old one is kept" \
    test $rc -eq 0 -a -f "$dir/audit.jsonl.1" -a "$(wc -l < "$dir/audit.jsonl.1")" -eq "$lines" -a "$(wc -l < "$dir/audit.jsonl" 2>/dev/null || echo 0)" -eq 1
fi

# ---- Removal while Slurm still loads the plugins ----
# The cluster's slurm.conf ($SLURM_CONF) has JobSubmitPlugins=trainfit and its plugstack.conf
# the required SPANK line: slurmctld would not start, sbatch would fail, without the package.
slurm_pkg=trainfit-slurm
# The package's state alone ("installed", "not-installed"): a refused purge leaves the
# selection at "purge" ("purge ok installed"), the package installed.
installed_state() { dpkg-query -W -f='${db:Status-Status}' $slurm_pkg 2>/dev/null; }
out=$(dpkg -i "$(deb $slurm_pkg)" 2>&1); rc=$?
detail="rc=$rc $out"; check "reinstalling trainfit-slurm over itself (prerm upgrade) is not refused" test $rc -eq 0
out=$(dpkg --purge $slurm_pkg 2>&1); rc=$?
detail="rc=$rc $out; $(installed_state)"
check "dpkg --purge refused while slurm.conf names the plugin: the message names JobSubmitPlugins, $SLURM_CONF and the plugstack line; still installed" \
  test $rc -ne 0 -a "$(installed_state)" = installed \
  -a -n "$(grep -F "JobSubmitPlugins=trainfit in $SLURM_CONF" <<<"$out" | grep -F "$dir/plugstack.conf" | grep -F TRAINFIT_FORCE_REMOVE=1)"
detail=$(ls "$plugindir"/*_trainfit.so 2>&1); check "the refused purge left both plugins in place" \
  test -f "$plugindir/job_submit_trainfit.so" -a -f "$plugindir/spank_trainfit.so"
cp "$dir/slurm.conf" "$dir/slurm.conf.with-plugin"; cp "$dir/plugstack.conf" "$dir/plugstack.conf.with-plugin"
sed -i '/^JobSubmitPlugins=/d' "$dir/slurm.conf"
out=$(dpkg --purge $slurm_pkg 2>&1); rc=$?
detail="rc=$rc $out; $(installed_state)"
check "JobSubmitPlugins removed, the required SPANK line left: still refused, naming only the plugstack line" \
  test $rc -ne 0 -a "$(installed_state)" = installed -a -n "$(grep -F "$dir/plugstack.conf" <<<"$out")" -a -z "$(grep -F JobSubmitPlugins <<<"$out")"
sed -i 's/^required /optional /' "$dir/plugstack.conf"
out=$(dpkg --purge $slurm_pkg 2>&1); rc=$?
detail="rc=$rc $out; $(installed_state)"
check "both lines handled (the SPANK line optional): the purge succeeds, with a warning about the optional line" \
  test $rc -eq 0 -a "$(installed_state)" != installed -a -n "$(grep -F warning <<<"$out" | grep -F optional)"
cp "$dir/slurm.conf.with-plugin" "$dir/slurm.conf"; cp "$dir/plugstack.conf.with-plugin" "$dir/plugstack.conf"
out=$(dpkg -i "$(deb $slurm_pkg)" 2>&1 && TRAINFIT_FORCE_REMOVE=1 dpkg --purge $slurm_pkg 2>&1); rc=$?
detail="rc=$rc $out; $(installed_state)"
check "TRAINFIT_FORCE_REMOVE=1: the purge goes ahead while slurm.conf names the plugin, with a warning" \
  test $rc -eq 0 -a "$(installed_state)" != installed -a -n "$(grep -F "TRAINFIT_FORCE_REMOVE=1" <<<"$out" | grep -F warning)"
out=$(dpkg -i "$(deb $slurm_pkg)" 2>&1); rc=$?  # back, for the purge at exit
detail="rc=$rc $out"; check "trainfit-slurm installed again" test $rc -eq 0

# ---- RPM ----
rpmdir=${TRAINFIT_RPMS:-}
if [[ -z $rpmdir && ${TRAINFIT_RPM:-1} != 0 ]] && command -v rpmbuild >/dev/null; then
  tarball=$work/trainfit-$version.tar.gz
  # What `git archive --prefix=trainfit-$version/ HEAD` gives, from the working tree (new files included).
  (cd "$src" && git ls-files -co --exclude-standard | while read -r f; do [[ -e $f ]] && echo "$f"; done |
     tar --transform "s|^|trainfit-$version/|" -czf "$tarball" -T -)
  mkdir -p "$work/rpm"
  start=$SECONDS
  if rpmbuild -ta --nodeps --define "_topdir $work/rpm" "$tarball" > "$dir/rpmbuild.out" 2>&1; then
    ok "rpmbuild -ta --nodeps ($((SECONDS - start)) s)"
    rpmdir=$work/rpm/RPMS
  else
    fail "rpmbuild -ta --nodeps" "$(tail -20 "$dir/rpmbuild.out")"
  fi
fi
if [[ -n $rpmdir ]]; then
  rpm_file() { find "$rpmdir" -name "$1-[0-9]*.rpm" | head -1; }
  main=$(rpm -qlp "$(rpm_file trainfit)" 2>/dev/null); slurm=$(rpm -qlp "$(rpm_file trainfit-slurm)" 2>/dev/null)
  doc=$(rpm -qlp "$(rpm_file trainfit-doc)" 2>/dev/null)
  detail="$main"; check "rpm trainfit: /usr/bin/trainfit and the unit" \
    test -n "$(grep -x /usr/bin/trainfit <<<"$main")" -a -n "$(grep '/systemd/system/trainfit.service$' <<<"$main")"
  detail="$slurm"; check "rpm trainfit-slurm: both plugins in $plugindir, the examples, logrotate" \
    test -n "$(grep -x "$plugindir/job_submit_trainfit.so" <<<"$slurm")" -a -n "$(grep -x "$plugindir/spank_trainfit.so" <<<"$slurm")" \
    -a -n "$(grep -x /usr/share/trainfit/examples/trainfit.conf <<<"$slurm")" -a -n "$(grep -x /etc/logrotate.d/trainfit-slurm <<<"$slurm")"
  detail="$doc"; check "rpm trainfit-doc: the docs" test -n "$(grep -x /usr/share/doc/trainfit/slurm.md <<<"$doc")"
  detail=$(rpm -qp --qf '%{VERSION}\n' "$(rpm_file trainfit-slurm)" 2>&1; rpm -qpR "$(rpm_file trainfit-slurm)" 2>&1)
  check "rpm trainfit-slurm: version names Slurm $slurm_version, requires exactly it" \
    test -n "$(grep -x "slurm = $slurm_version" <<<"$detail")" -a -n "$(grep -x "$version+slurm$slurm_version" <<<"$detail")"
  detail=$(rpm -qp --scripts "$(rpm_file trainfit)" 2>&1); check "rpm trainfit: %pre creates the user trainfit" grep -q "useradd -r -g trainfit" <<<"$detail"
  detail=$(rpm -qp --scripts "$(rpm_file trainfit-slurm)" 2>&1)
  check "rpm trainfit-slurm: %preun runs the removal guard on erase only (\$1 = 0)" \
    test -n "$(grep -F 'removal-guard.sh check' <<<"$detail")" -a -n "$(grep -F '"$1" -eq 0' <<<"$detail")" \
    -a -n "$(grep -x /usr/share/trainfit/removal-guard.sh <<<"$slurm")"
fi
