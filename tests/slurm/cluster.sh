#!/usr/bin/env bash
# A real single-host Slurm cluster on loopback for tests and benchmarks (as root):
# munged, slurmctld and slurmd from Debian's packages, everything else in a temporary
# directory, fake GPUs as empty device files (gres.conf File=, AutoDetect=off). Source it, then:
#   cluster_start DIR PLUGIN_DIR [job_submit_plugins]   # "" = no job_submit plugin
#                                  # PLUGIN_DIR "" = no PluginDir: Slurm's own (installed plugins);
#                                  # else PLUGIN_DIR first, then Slurm's own (cluster_system_plugin_dir)
#   cluster_stop DIR
# It exports SLURM_CONF for the clients. Ports are derived from the PID so that
# several clusters can coexist; TRAINFIT_CLUSTER_PORT_BASE (default 20000) moves the range
# (tests/slurm/releases.sh: a release's PID namespace shares the host's ports). CLUSTER_NODES_CONF (lines) replaces the one real node
# and its partitions: FUTURE nodes for admission tests, with no slurmd (22.05 refuses
# FUTURE nodes beside the real one: "Duplicated NodeHostName").

cluster_munge() {
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    [[ -f /etc/munge/munge.key ]] || mungekey -c -k /etc/munge/munge.key 2>/dev/null || \
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null
    chown -R munge:munge /run/munge /etc/munge /var/lib/munge /var/log/munge
    chmod 0700 /etc/munge; chmod 0400 /etc/munge/munge.key
    runuser -u munge -- /usr/sbin/munged
  fi
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "cluster: munged does not answer" >&2
  return 1
}

# The running Slurm's release as a number: 2405 for 24.05 ("slurm-wlm 24.11.5" -> 2411).
cluster_release() { /usr/sbin/slurmctld -V | sed -n 's/^slurm[^ ]* \([0-9]*\)\.\([0-9]*\).*/\1\2/p'; }

# Slurm's own plugins. PluginDir lists the build's folder FIRST: Slurm loads the first
# DIR/NAME.so it finds along PluginDir (src/common/plugin.c plugin_load_and_link at
# slurm-22-05-8-1), so the build is tested even where the trainfit-slurm package installed its
# job_submit_trainfit.so in this folder. CLUSTER_SYSTEM_PLUGIN_DIR replaces the folder
# (integration_test.sh: a copy with a decoy job_submit_trainfit.so in it).
cluster_system_plugin_dir() { echo "${CLUSTER_SYSTEM_PLUGIN_DIR:-/usr/lib/x86_64-linux-gnu/slurm-wlm}"; }

# The job_submit_trainfit.so slurmctld has mapped (its /proc/PID/maps): which file it loaded.
cluster_loaded_job_submit() {
  local pid
  pid=$(cat "$1/run/slurmctld.pid" 2>/dev/null) || return 1
  awk '$6 ~ /\/job_submit_trainfit\.so$/ {print $6; exit}' "/proc/$pid/maps"
}

cluster_start() {
  local dir=$1 plugins=$2 job_submit=${3-trainfit}
  local port=$((${TRAINFIT_CLUSTER_PORT_BASE:-20000} + ($$ % 2000) * 4))
  mkdir -p "$dir"/{state,spool,run,log,dev}
  for i in $(seq 0 63); do : > "$dir/dev/nvidia$i"; done
  cluster_munge || return 1
  cat > "$dir/slurm.conf" <<CONF
ClusterName=trainfit$$
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
${plugins:+PluginDir=$plugins:$(cluster_system_plugin_dir)}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=${CLUSTER_SCHEDULER:-sched/builtin}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$dir/plugstack.conf
MaxJobCount=100000
MinJobAge=2
# Slurm's default, 10 s, unless the suite asks for more (integration_test.sh: 30 s).
MessageTimeout=${CLUSTER_MESSAGE_TIMEOUT:-10}
${job_submit:+JobSubmitPlugins=$job_submit}
${CLUSTER_NODES_CONF:-NodeName=localhost CPUs=64 RealMemory=512000 Gres=gpu:h100:64 State=UNKNOWN
PartitionName=gpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=elastic Nodes=localhost MaxTime=INFINITE State=UP
PartitionName=strict Nodes=localhost MaxTime=INFINITE State=UP
PartitionName=whole Nodes=localhost MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE}
CONF
  cat > "$dir/gres.conf" <<CONF
AutoDetect=off
NodeName=localhost Name=gpu Type=h100 File=$dir/dev/nvidia[0-63]
CONF
  # From 23.02 slurmd sets up cgroups whatever the task and proctrack plugins are, and fails
  # without /sys/fs/cgroup (a release's root filesystem, tests/slurm/releases.sh); 23.02 added
  # "disabled", which 22.05 does not know.
  (( $(cluster_release) >= 2302 )) && echo "CgroupPlugin=disabled" > "$dir/cgroup.conf"
  [[ -f "$dir/plugstack.conf" || -z $plugins ]] || \
    echo "required $plugins/spank_trainfit.so default_gpu=h100 conf=$dir/trainfit.conf" > "$dir/plugstack.conf"
  export SLURM_CONF=$dir/slurm.conf
  TRAINFIT_CONF=${TRAINFIT_CONF_PATH:-$dir/trainfit.conf} cluster_exec "$dir" /usr/sbin/slurmctld -f "$dir/slurm.conf" || return 1
  if [[ -n ${CLUSTER_NODES_CONF:-} ]]; then  # no real node: wait for slurmctld alone
    for _ in $(seq 100); do timeout 10 scontrol ping 2>/dev/null | grep -q UP && return 0; sleep 0.2; done
    echo "cluster: slurmctld does not answer; see $dir/log" >&2
    return 1
  fi
  cluster_exec "$dir" /usr/sbin/slurmd -f "$dir/slurm.conf" || return 1
  for _ in $(seq 100); do
    local daemon
    for daemon in slurmctld slurmd; do
      if ! pgrep -f "$daemon -f $dir/slurm.conf" >/dev/null; then
        echo "cluster: $daemon exited; the end of $dir/log/$daemon.log:" >&2
        tail -5 "$dir/log/$daemon.log" >&2
        return 1
      fi
    done
    case "$(timeout 10 sinfo -h -o %T 2>/dev/null | head -1)" in
      idle*) return 0 ;;
      drain*|down*) scontrol update nodename=localhost state=resume >/dev/null 2>&1 ;;
    esac
    sleep 0.2
  done
  echo "cluster: the node never became idle; see $dir/log" >&2
  return 1
}

# Runs a Slurm daemon of the cluster in DIR with DIR/var-log-slurm seen as /var/log/slurm
# (a private mount namespace), so that a trainfit.conf without audit_log (whose default is
# /var/log/slurm/trainfit-audit.jsonl) never writes the system's log. Where mount namespaces
# are not allowed the daemon runs as it is; scripts/test.sh checks that nothing was written.
cluster_exec() {
  local dir=$1
  shift
  mkdir -p "$dir/var-log-slurm"
  if [[ -d /var/log/slurm ]] && unshare --mount --propagation private true 2>/dev/null; then
    unshare --mount --propagation private sh -c 'mount --bind "$0" /var/log/slurm 2>/dev/null; exec "$@"' \
      "$dir/var-log-slurm" "$@"
  else
    "$@"
  fi
}

cluster_stop() {
  local dir=$1
  for daemon in slurmd slurmctld; do
    local pidfile="$dir/run/$daemon.pid"
    [[ -f $pidfile ]] && kill "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null
  done
  for _ in $(seq 50); do
    pgrep -f "slurm(ctld|d) -f $dir/slurm.conf" >/dev/null || break
    sleep 0.1
  done
  return 0
}
