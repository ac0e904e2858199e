#!/bin/sh
# slurm_shards.sh HSDR PYTHON MATRIX WORKDIR: the README's Slurm example for real (ctest label slurm). Starts a
# one-node Slurm on this machine (munged, slurmctld, slurmd as root, every file of theirs in a temporary directory,
# SLURM_CONF pointing there: nothing under /etc is read or written), submits scripts/slurm-shards.sh as a job array
# of 3 shards of MATRIX, waits for it, merges the shards with `hsdr merge` and compares the merged rows with an
# unsharded run of MATRIX (check_shard_merge.py: the same keys and deterministic fields, the same break-even fits).
# Installs Debian's slurm-wlm and munge with apt-get when missing. Exit 77 (skipped, with the reason) when not root
# or when apt-get cannot install them; every daemon started here is stopped on exit, also after a failure.
set -eu
hsdr=$1 py=$2 matrix=$3 work=$4
root=$(cd "$(dirname "$0")/.." && pwd)
shards=3
job_timeout=180 # seconds for the whole array (a few seconds each on two cores)
t0=$(date +%s)
say() { echo "slurm_shards: $(($(date +%s) - t0)) s: $*"; }
skip() {
    echo "slurm_shards: SKIPPED: $*"
    exit 77
}
fail() {
    echo "slurm_shards: FAILED: $*" >&2
    exit 1
}

# --- Slurm and munge from Debian
[ "$(uname -s)" = Linux ] || skip "needs Linux (Debian's slurm-wlm and munge)"
[ "$(id -u)" -eq 0 ] || skip "needs root (installs slurm-wlm and munge, runs slurmctld and slurmd as SlurmUser=root)"
missing=""
for p in slurm-wlm slurmctld slurmd slurm-client munge; do
    case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
    esac
done
if [ -n "$missing" ]; then
    command -v apt-get >/dev/null || skip "no apt-get to install$missing"
    say "apt-get install$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt_log=$(mktemp)
    apt_install() {
        apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 slurm-wlm munge >"$apt_log" 2>&1
    }
    # the package lists are usually fresh (./hsdr-bench test updated them): update only when the install fails
    if ! apt_install && ! { apt-get update -qq >>"$apt_log" 2>&1 && apt_install; }; then
        tail -n 5 "$apt_log"
        rm -f "$apt_log"
        skip "apt-get could not install slurm-wlm and munge (no network?)"
    fi
    rm -f "$apt_log"
fi
for c in munged munge slurmctld slurmd sbatch squeue scontrol sinfo; do
    command -v "$c" >/dev/null || fail "$c not found after installing slurm-wlm and munge"
done

# --- a one-node cluster in a temporary directory (short paths: the munge socket's path must fit a sockaddr_un)
tmp=$(mktemp -d /tmp/hsdr-slurm.XXXXXX)
chmod 755 "$tmp" # munged wants its socket's directories searchable by all
conf=$tmp/slurm.conf
jobid=""
sl() { SLURM_CONF=$conf "$@"; } # a Slurm command against this cluster only (the test's own environment keeps none)
pid_of() { cat "$tmp/$1.pid" 2>/dev/null || true; }
# alive PID: running (a zombie waiting for init to reap it has stopped)
alive() {
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ -n "$st" ] && [ "$st" != Z ]
}
# stop DAEMON (its pid file): SIGTERM, up to 15 s, then SIGKILL
stop() {
    pid=$(pid_of "$1")
    [ -n "$pid" ] && alive "$pid" || return 0
    kill "$pid" 2>/dev/null || true
    n=0
    while alive "$pid" && [ $n -lt 75 ]; do
        sleep 0.2
        n=$((n + 1))
    done
    if alive "$pid"; then
        echo "slurm_shards: $1 (pid $pid) ignored SIGTERM for 15 s: SIGKILL" >&2
        kill -9 "$pid" 2>/dev/null || true
    fi
    stopped="$stopped $1"
}
cleanup() {
    rc=$?
    trap - EXIT INT TERM HUP
    set +e
    stopped=""
    # a failure with the array still queued or running
    if [ -n "$jobid" ] && [ -n "$(pid_of slurmctld)" ] && [ -n "$(sl squeue -h -j "$jobid" 2>/dev/null)" ]; then
        sl scancel "$jobid" 2>/dev/null
        n=0
        while [ -n "$(sl squeue -h -j "$jobid" 2>/dev/null)" ] && [ $n -lt 20 ]; do
            sleep 0.5
            n=$((n + 1))
        done
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        for f in "$tmp"/log/*.log; do
            [ -f "$f" ] || continue
            echo "--- last lines of $f"
            tail -n 15 "$f"
        done
    fi
    stop slurmd
    stop slurmctld
    # what outlived slurmd (a job step after a failure) still carries this cluster's SLURM_CONF
    for p in /proc/[0-9]*; do
        { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf" || continue
        echo "slurm_shards: killing leftover process ${p#/proc/}: $({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null)" >&2
        kill -9 "${p#/proc/}" 2>/dev/null
    done
    stop munged
    [ -z "$stopped" ] || say "stopped$stopped"
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# munge: a fresh key and a daemon of our own on its own socket (a munged of the system, if any, is left alone)
mkdir -m 755 "$tmp/munge"
mkdir -m 700 "$tmp/state" "$tmp/spool" "$tmp/log"
(umask 077 && dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null)
munged --socket="$tmp/munge/socket" --key-file="$tmp/munge/munge.key" --log-file="$tmp/log/munged.log" \
    --pid-file="$tmp/munged.pid" --seed-file="$tmp/munge/munged.seed" </dev/null >/dev/null 2>&1 ||
    fail "munged did not start"
munge -S "$tmp/munge/socket" -n | unmunge -S "$tmp/munge/socket" >/dev/null || fail "munge credential round trip"

# two free TCP ports for slurmctld and slurmd (a Slurm of the machine's own may hold 6817 and 6818)
ports=$("$py" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
ctld_port=${ports% *} slurmd_port=${ports#* }
node=$(hostname -s)
# the node as slurmd sees it (CPUs, sockets, cores, threads, RealMemory), under our name and address
hw=$(slurmd -C | sed -n '1s/^NodeName=[^ ]* *//p')
[ -n "$hw" ] || fail "slurmd -C printed no node line"
cat >"$conf" <<EOF
# one-node cluster of tests/slurm_shards.sh
ClusterName=hsdrtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=hsdr Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds
wait_for() {
    what=$1 secs=$2
    shift 2
    n=0
    until "$@" >/dev/null 2>&1; do
        n=$((n + 1))
        [ $n -lt $((secs * 2)) ] || fail "$what within $secs s"
        sleep 0.5
    done
}
node_idle() { [ "$(sl sinfo -h -n "$node" -o %T)" = idle ]; }
sl slurmctld </dev/null >/dev/null 2>&1 || fail "slurmctld did not start"
wait_for "slurmctld answering" 30 sl scontrol ping
sl slurmd -N "$node" </dev/null >/dev/null 2>&1 || fail "slurmd did not start"
wait_for "node $node idle" 30 node_idle
say "munged, slurmctld (port $ctld_port), slurmd (port $slurmd_port) up; node $node idle: $hw"

# --- the unsharded run here, the shards as a Slurm job array of scripts/slurm-shards.sh
rm -rf "$work"
mkdir -p "$work/logs"
run_args="--stages none --set extra=none" # the matrix of run_shard_merge.sh: seconds
"$hsdr" run "$matrix" --out "$work/all" --quiet $run_args >/dev/null
jobid=$(cd "$work" && SLURM_CONF=$conf HSDR_BUILD=$(dirname "$hsdr") sbatch --parsable --array=0-$((shards - 1)) \
    --output="$work/logs/slurm-%A_%a.out" "$root/scripts/slurm-shards.sh" "$matrix" "$work" $run_args)
jobid=${jobid%%;*}
say "submitted job array $jobid: sbatch --array=0-$((shards - 1)) scripts/slurm-shards.sh $matrix $work $run_args"
last=""
deadline=$(($(date +%s) + job_timeout))
while :; do
    if q=$(sl squeue -h -r -j "$jobid" -o %T 2>&1); then
        [ -n "$q" ] || break
        now=$(echo "$q" | sort | uniq -c | awk -v n=$shards '{s = s ", " $1 " " tolower($2); q += $1}
            END {print n - q " finished" s}')
    else
        now="squeue failed: $q"
    fi
    [ "$now" = "$last" ] || say "array $jobid: $now"
    last=$now
    [ "$(date +%s)" -lt "$deadline" ] || fail "job array $jobid not finished after $job_timeout s"
    sleep 0.5
done
# every task COMPLETED with exit 0 (the controller keeps finished jobs for MinJobAge, 300 s)
tasks=$(sl scontrol -o show job "$jobid")
ok=$(echo "$tasks" | grep -c ' JobState=COMPLETED .* ExitCode=0:0 ' || true)
if [ "$ok" -ne "$shards" ]; then
    echo "$tasks" | sed -E 's/.*(ArrayTaskId=[^ ]+).*(JobState=[^ ]+).*(ExitCode=[^ ]+).*/\1 \2 \3/'
    for f in "$work"/logs/*.out; do
        echo "--- $f"
        cat "$f"
    done
    fail "$ok of $shards tasks of job array $jobid completed with exit code 0"
fi
say "array $jobid: all $shards tasks COMPLETED, exit code 0:0"
set --
i=0
while [ $i -lt $shards ]; do
    set -- "$@" "$work/shard-$i/results.jsonl"
    i=$((i + 1))
done
"$hsdr" merge "$work/merged" "$@"
"$py" "$root/tests/check_shard_merge.py" "$work/all" "$work/merged"
