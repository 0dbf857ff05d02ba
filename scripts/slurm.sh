#!/usr/bin/env bash
# hytask under a batch system: starts a one-machine Slurm from Debian's packages (munge with a
# private key, slurmctld, and slurmd with this machine's cores), runs the showcase
# (hytask-overlap, as scripts/demo.sh does) and the 3-D Jacobi app with `srun` and with
# `sbatch` under each MPI, then stops every daemon and removes every file it made.
#
#   scripts/slurm.sh [run] [--mpi openmpi|mpich|both]   set up, build, run, show the output
#   scripts/slurm.sh check [--mpi ...] [--build-dir DIR] small jobs whose output is checked
#                                                      (the full tier's slurm.* tests)
#
# Everything lives in one temporary directory: the munge key and socket, slurm.conf, the
# controller's state, the daemons' spool and logs. The daemons run as root, in the
# foreground of this script's children, without systemd or cgroups (proctrack/linuxproc,
# task/affinity); their ports are picked free. Nothing in /etc is read or changed, and a
# Slurm or munge already running on the machine is left alone.
#
# Which srun --mpi for which MPI (`srun --mpi=list` names the plugins): Debian's Open MPI
# takes its rank from PMIx, so --mpi=pmix; Debian's MPICH (Hydra's PMI client) speaks PMI-2's
# wire protocol to Slurm's pmi2 plugin, so --mpi=pmi2. With the other plugin, or none, each
# process starts as a 1-rank job of its own: the checks require every job's rank count.
#
# Needs root (the daemons run as root, and apt-get installs slurmctld, slurmd, munge and
# slurm-client when they are missing). `check` exits with 77 (ctest's skip) where Slurm cannot
# run: not root, the packages cannot be installed, or the daemons do not come up.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
SLURM_PACKAGES=(slurmctld slurmd slurm-client munge)
SKIP=77

say() { printf '[slurm] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

mode=run mpis=both build_dir=${HYTASK_BUILD_DIR:-$root/build}
if [[ ${1:-} == run || ${1:-} == check ]]; then mode=$1; shift; fi
while (($#)); do
  case $1 in
    --mpi) mpis=${2:?--mpi needs openmpi, mpich or both}; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) say "unknown argument '$1'"; usage >&2; exit 2 ;;
  esac
done
case $mpis in
  openmpi|mpich) mpi_list=("$mpis") ;;
  both) mpi_list=(openmpi mpich) ;;
  *) say "--mpi: '$mpis' is not openmpi, mpich or both"; exit 2 ;;
esac

# In check mode a missing prerequisite is a skip, not a failure.
cannot() {
  if [[ $mode == check ]]; then say "SKIP: $*"; exit $SKIP; fi
  die "$*"
}

[[ $(id -u) -eq 0 ]] || cannot "Slurm's daemons run as root here: run this as root"

install_slurm() {
  local missing=()
  for p in "${SLURM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || cannot "no apt-get to install ${missing[*]}"
  say "installing ${missing[*]} (Debian's Slurm 22.05 and munge)"
  # The packages' own services (a systemd machine would start munge with /etc's key) are not
  # used: this script starts private daemons. A policy-rc.d that denies starts, if the
  # machine has one, keeps them from starting at all.
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null; } || cannot "apt-get could not install ${missing[*]}"
}

install_slurm
for c in slurmctld slurmd srun sbatch sinfo munged munge; do
  command -v "$c" >/dev/null || cannot "$c is missing after installing ${SLURM_PACKAGES[*]}"
done

if [[ $mode == run ]]; then
  export HYTASK_BUILD_DIR=$build_dir
  # shellcheck source=setup.sh
  source "$here/setup.sh"
  install_missing_packages
  configure_and_build hytask-info hytask-overlap jacobi3d
  # The other MPI's copies, when this tree has them (HYTASK_TEST_OTHER_MPI).
  known=$(cmake --build "$build_dir" --target help 2>/dev/null || true)
  others=()
  for t in hytask-overlap-openmpi hytask-overlap-mpich jacobi3d-openmpi jacobi3d-mpich; do
    grep -qE "(^|[ :.])$t(:|$| )" <<<"$known" && others+=("$t")
  done
  ((${#others[@]} == 0)) || cmake --build "$build_dir" --parallel "$(nproc)" --target "${others[@]}"
fi

# The programs of each MPI, and its srun plugin.
plugin_of() { [[ $1 == openmpi ]] && echo pmix || echo pmi2; }
suffix_of() {  # the build's primary MPI has no suffix, the other one -<mpi>
  if [[ -x $build_dir/tools/hytask-overlap-$1 ]]; then echo "-$1"; else echo ""; fi
}
programs_ok() {
  local mpi=$1 s
  s=$(suffix_of "$mpi")
  [[ -x $build_dir/tools/hytask-overlap$s && -x $build_dir/apps/jacobi3d/jacobi3d$s ]] || return 1
  # The unsuffixed programs are the primary MPI's: make sure it is this one.
  [[ -n $s ]] || ldd "$build_dir/tools/hytask-overlap" | grep -q "$([[ $mpi == openmpi ]] && echo libmpi.so || echo libmpich)"
}
for m in "${mpi_list[@]}"; do
  programs_ok "$m" || cannot "no hytask-overlap and jacobi3d built against $m in $build_dir (build the targets hytask-overlap and jacobi3d, and their -$m copies)"
done
info=$build_dir/hytask-info
[[ -x $info ]] || cannot "no $info (build the target hytask-info)"

# ---- the one-machine Slurm ---------------------------------------------------------------
dir=$(mktemp -d /tmp/hytask-slurm.XXXXXX)
chmod 755 "$dir"  # munged wants its socket's directory to be reachable
pids=()
cleanup() {
  local rc=$?
  # Jobs first (scancel needs the controller), then the daemons, newest first.
  [[ -f $dir/slurm.conf ]] && SLURM_CONF=$dir/slurm.conf timeout 10 scancel --quiet --user=root 2>/dev/null || true
  for ((i = ${#pids[@]} - 1; i >= 0; --i)); do kill "${pids[$i]}" 2>/dev/null || true; done
  for ((i = ${#pids[@]} - 1; i >= 0; --i)); do
    for _ in $(seq 50); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pids[$i]}" 2>/dev/null || true
  done
  if ((rc != 0 && rc != SKIP)); then
    for f in "$dir"/log/*.log; do
      [[ -f $f ]] || continue
      say "last lines of $(basename "$f"):"
      tail -n 15 "$f" >&2
    done
  fi
  rm -rf "$dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$dir"/{munge,state,spool,log,jobs}
chmod 700 "$dir/munge"

# A port nobody listens on, from a range away from Slurm's defaults (6817-6819).
used_ports=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    grep -qx "$p" <<<"$used_ports" || { used_ports+=$'\n'$p; echo "$p"; return; }
  done
  cannot "no free TCP port found"
}

# munge: a private key, socket, pid and log; --force lets it run as root.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
socket=$dir/munge/munge.sock
munged --foreground --force --socket="$socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed" >>"$dir/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $socket ]] && break; sleep 0.1; done
munge -S "$socket" -n </dev/null | unmunge -S "$socket" >/dev/null 2>&1 ||
  cannot "munged did not start (see above)"

# This machine as slurmd sees it (CPUs, sockets, cores, threads), under its name; memory is
# not scheduled (a RealMemory above what slurmd finds later would drain the node).
node_line=$(slurmd -C | head -n 1 | sed 's/ RealMemory=[0-9]*//')
[[ $node_line == NodeName=* ]] || cannot "slurmd -C did not describe this machine: $node_line"
node=${node_line#NodeName=}; node=${node%% *}
cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")

export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<EOF
# A one-machine cluster for hytask's scripts/slurm.sh; removed when it ends.
ClusterName=hytask
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
InactiveLimit=0
KillWait=5
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=hytask Nodes=ALL Default=YES MaxTime=30 State=UP
EOF

# Both in the foreground of a child (-D), so that this script owns their processes; -c: no
# state from an earlier controller.
slurmctld -D -c -f "$SLURM_CONF" >>"$dir/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >>"$dir/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 100); do
  state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true)
  [[ $state == idle ]] && break
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || cannot "a Slurm daemon exited at start (its log follows)"; done
  sleep 0.2
done
[[ $state == idle ]] || cannot "node $node did not become idle (state '$state')"
say "Slurm is up in $dir: node $node, $cpus CPUs; srun --mpi=list: $(srun --mpi=list 2>&1 | sed -n 's/^\t//p' | tr '\n' ' ')"

# ---- the jobs ----------------------------------------------------------------------------
failures=0
fail() { say "FAIL: $*"; failures=$((failures + 1)); }
ranks=2
((cpus >= ranks)) || ranks=1
cpt=$((cpus / ranks))  # CPUs per task: the machine shared by the ranks

# srun's flags for a job of $ranks ranks with $cpt CPUs each, bound to cores.
srun_flags() { echo "--mpi=$(plugin_of "$1") --ntasks=$ranks --cpus-per-task=$cpt --cpu-bind=cores"; }

# A job's output must show every rank, each once (the runtime's info line, HYTASK_VERBOSE=2,
# names the job's size on rank 0; hytask-info's knob table shows the workers).
expect_ranks() {  # expect_ranks WHAT FILE
  local what=$1 file=$2 started
  started=$(grep -c "^hytask\[rank 0\]: info: runtime started: .*, $ranks rank(s)" "$file" || true)
  [[ $started -ge 1 ]] || fail "$what: no 'runtime started ... $ranks rank(s)' line from rank 0"
  for ((r = 1; r < ranks; ++r)); do
    ! grep -q "^hytask\[rank $r\]: info: runtime started" "$file" ||
      fail "$what: rank $r repeated the once-per-job line"
  done
  grep -q "^hytask\[rank [0-9]*\]: \(warning\|error\)" "$file" &&
    fail "$what: hytask warned or failed: $(grep -m1 '^hytask\[rank [0-9]*\]: \(warning\|error\)' "$file")"
  return 0
}

run_srun_jobs() {
  local mpi=$1 s flags out
  s=$(suffix_of "$mpi")
  read -ra flags <<<"$(srun_flags "$mpi")"
  out=$dir/jobs/srun-$mpi
  mkdir -p "$out"
  say "$mpi: srun ${flags[*]} hytask-info (HYTASK_THREADS from --cpus-per-task)"
  srun "${flags[@]}" "$info" >"$out/info.txt" 2>&1 || fail "$mpi: srun hytask-info failed"
  [[ $mode == run ]] && grep "HYTASK_THREADS" "$out/info.txt" | head -n 1
  n=$(grep -cE "^HYTASK_THREADS +$cpt +slurm " "$out/info.txt" || true)
  [[ $n -eq $ranks ]] || fail "$mpi: $n of $ranks ranks' hytask-info show HYTASK_THREADS=$cpt from slurm: $(grep HYTASK_THREADS "$out/info.txt" | head -n 2)"

  say "$mpi: srun ${flags[*]} jacobi3d (every variant against the sequential reference)"
  if HYTASK_VERBOSE=2 "$root/tests/apps/jacobi3d_check.sh" srun "${flags[@]}" -- \
       "$build_dir/apps/jacobi3d/jacobi3d$s" --size 17x12x10 --iters 4 --window 2 --block 3x5x0 \
       --threads "$cpt" >"$out/jacobi3d.txt" 2>&1; then
    expect_ranks "$mpi srun jacobi3d" "$out/jacobi3d.txt"
    grep -q "^PASS: every variant" "$out/jacobi3d.txt" || fail "$mpi: srun jacobi3d: no PASS line"
  else
    fail "$mpi: srun jacobi3d: $(grep -m1 'FAIL' "$out/jacobi3d.txt" || tail -n 3 "$out/jacobi3d.txt")"
  fi
  [[ $mode == run ]] && grep -E "^(variant |sequential|dataflow|masteronly|PASS)" "$out/jacobi3d.txt" | head -n 6

  say "$mpi: srun ${flags[*]} hytask-overlap (the showcase's sweep, checked)"
  if HYTASK_VERBOSE=2 "$root/tests/tools/overlap_sweep.sh" "$out/overlap" mpi,hytask-workers \
       srun "${flags[@]}" -- "$build_dir/tools/hytask-overlap$s" >"$out/overlap.txt" 2>&1; then
    expect_ranks "$mpi srun hytask-overlap" "$out/overlap.txt"
  else
    fail "$mpi: srun hytask-overlap: $(tail -n 3 "$out/overlap.txt")"
  fi
  [[ $mode == run ]] && sed -n '/^progression (Kumar)/,$p' "$out/overlap.txt" | head -n 8
  return 0
}

run_sbatch_job() {
  local mpi=$1 s flags out
  s=$(suffix_of "$mpi")
  out=$dir/jobs/sbatch-$mpi
  mkdir -p "$out"
  # The batch script as a user would write it (docs/install.md, "Running under Slurm"):
  # ranks and CPUs per rank in #SBATCH lines; srun inherits the ranks (Slurm 22.05's not
  # --cpus-per-task: said again); the workers follow SLURM_CPUS_PER_TASK without
  # HYTASK_THREADS.
  cat >"$out/job.sh" <<EOF
#!/bin/bash
#SBATCH --job-name=hytask-$mpi
#SBATCH --ntasks=$ranks
#SBATCH --cpus-per-task=$cpt
#SBATCH --time=10
#SBATCH --output=$out/job.out
export HYTASK_VERBOSE=2
export HYTASK_PIN=cores
srun --mpi=$(plugin_of "$mpi") --cpus-per-task="\$SLURM_CPUS_PER_TASK" --cpu-bind=cores \\
  "$build_dir/apps/jacobi3d/jacobi3d$s" \\
  --variant sequential,dataflow,masteronly --size 24x16x16 --iters 6
echo "jacobi3d: exit \$?"
srun --mpi=$(plugin_of "$mpi") --cpus-per-task="\$SLURM_CPUS_PER_TASK" --cpu-bind=cores \\
  "$build_dir/tools/hytask-overlap$s" \\
  --modes mpi,hytask-workers --sizes 64K,256K --steps 0.5,1.1 --iters 2 --min-time 0.001 --quiet
echo "hytask-overlap: exit \$?"
EOF
  say "$mpi: sbatch --wait (jacobi3d and hytask-overlap, $ranks ranks x $cpt CPUs)"
  (cd "$out" && sbatch --wait --quiet "$out/job.sh") >"$out/sbatch.txt" 2>&1 ||
    fail "$mpi: the batch job failed: $(tail -n 3 "$out/sbatch.txt") $(tail -n 5 "$out/job.out" 2>/dev/null)"
  [[ -f $out/job.out ]] || { fail "$mpi: the batch job wrote no output"; return 0; }
  [[ $mode == run ]] && cat "$out/job.out"
  grep -q "^jacobi3d: exit 0$" "$out/job.out" || fail "$mpi: sbatch jacobi3d did not exit 0"
  grep -q "^hytask-overlap: exit 0$" "$out/job.out" || fail "$mpi: sbatch hytask-overlap did not exit 0"
  # jacobi3d: the variants' checksums equal the sequential reference's.
  local sums ref
  sums=$(sed -n 's/.*checksum \(0x[0-9a-f]*\).*/\1/p' "$out/job.out" | sort -u)
  ref=$(sed -n 's/^sequential .*checksum \(0x[0-9a-f]*\).*/\1/p' "$out/job.out")
  [[ -n $ref && $sums == "$ref" ]] || fail "$mpi: sbatch jacobi3d: checksums '$sums', sequential '$ref'"
  [[ $(grep -c 'checksum 0x' "$out/job.out") -eq 3 ]] || fail "$mpi: sbatch jacobi3d: expected 3 checksum lines"
  # Two runtimes per job (jacobi3d, hytask-overlap), each saying once that it started.
  [[ $(grep -c "^hytask\[rank 0\]: info: runtime started: $cpt worker(s) per process, $ranks rank(s)" "$out/job.out") -ge 2 ]] ||
    fail "$mpi: sbatch: rank 0 did not report $cpt workers and $ranks ranks for both programs: $(grep -m2 'runtime started' "$out/job.out")"
  grep -q "^hytask\[rank [1-9][0-9]*\]: info: runtime started" "$out/job.out" &&
    fail "$mpi: sbatch: a rank other than 0 printed the once-per-job line"
  grep -q "^hytask\[rank [0-9]*\]: \(warning\|error\)" "$out/job.out" &&
    fail "$mpi: sbatch: $(grep -m1 '^hytask\[rank [0-9]*\]: \(warning\|error\)' "$out/job.out")"
  return 0
}

for m in "${mpi_list[@]}"; do
  run_srun_jobs "$m"
  run_sbatch_job "$m"
done

if ((failures > 0)); then
  for f in "$dir"/jobs/*/*.txt "$dir"/jobs/*/*.out; do
    [[ -f $f ]] || continue
    say "last lines of ${f#"$dir"/jobs/}:"
    tail -n 20 "$f" >&2
  done
  say "$failures check(s) failed"
  exit 1
fi
say "ok: srun and sbatch jobs under ${mpi_list[*]} ran on $ranks rank(s) x $cpt CPU(s) with the expected output"
