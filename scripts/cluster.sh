#!/usr/bin/env bash
# Cluster in a box: N network "nodes" on this machine, so that MPI messages cross a real,
# bandwidth-limited TCP link and communication/computation overlap can be measured.
#
#   scripts/cluster.sh run [options] -- PROGRAM [ARGS...]   run an MPI job across the nodes
#   scripts/cluster.sh check                                say whether nodes can be made here
#   scripts/cluster.sh clean                                remove nodes left by a killed run
#
# Each node is a network namespace with its own share of the cores. Two nodes are joined by
# one veth link; more go through a bridge in a namespace of its own. Every link is limited
# with tc's tbf in both directions. Everything is created for one run and removed when it
# ends, also on Ctrl-C and on failure. Needs root and iproute2; without them (or with
# --local) the job runs on plain localhost, where overlap figures mean little.
# See DESIGN.md ("Cluster in a box") and docs/overlap.md.
set -euo pipefail

PROG=cluster.sh
PREFIX=hytc                # namespace names: hytc<pid>n<i>, hytc<pid>br
SUBNET=10.97.0             # addresses used only inside our namespaces

say() { printf '[cluster] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
  cat <<EOF
usage: $PROG run [options] -- PROGRAM [ARGS...]
       $PROG check
       $PROG clean

Runs an MPI job across N network namespaces ("nodes") joined by bandwidth-limited veth
links, then removes every namespace and link it made (also on Ctrl-C or failure).

options of run:
  --mpi openmpi|mpich   MPI library to launch with (default: openmpi)
  -n, --np RANKS        MPI ranks, spread round-robin over the nodes (default: one per node)
  --nodes N             number of nodes (default: 2)
  --rate RATE           bandwidth limit of every link, as tc understands it: 2gbit, 500mbit,
                        or "none" (default: 2gbit)
  --cpus split|shared   split:  each node gets its own share of the cores (default), like
                                real nodes; its ranks inherit that CPU set
                        shared: every node may use every core
  --mtu BYTES           MTU of the links (default 1500; 9000 for jumbo frames)
  --local               do not make nodes: run on plain localhost (shared memory)
  --stats               print the bytes each node sent and received over its link
  --capture FILE        record node 0's link with tcpdump into FILE (pcap; needs tcpdump),
                        e.g. for bench/ob1_tcp_trace.py
  -h, --help            this text

Without root, iproute2 or namespace support, run falls back to --local with a warning.
The job's exit status is the script's; usage errors exit with 2.
examples:
  $PROG run --mpi openmpi -n 2 -- build/tools/hytask-overlap --sizes 1M,4M
  $PROG run --mpi mpich --nodes 4 --rate 1gbit -- build/tests/cluster/cluster_check
EOF
}

# ---- argument parsing ---------------------------------------------------------------------
mpi=openmpi np="" nodes=2 rate=2gbit cpus=split local=0 stats=0 mtu=1500 capture=""

parse_run_args() {
  while (($#)); do
    case $1 in
      --mpi) [[ $# -ge 2 ]] || die "--mpi needs a value (openmpi or mpich)"; mpi=$2; shift 2 ;;
      --mpi=*) mpi=${1#*=}; shift ;;
      -n|--np) [[ $# -ge 2 ]] || die "$1 needs a number of ranks"; np=$2; shift 2 ;;
      --np=*) np=${1#*=}; shift ;;
      --nodes) [[ $# -ge 2 ]] || die "--nodes needs a number"; nodes=$2; shift 2 ;;
      --nodes=*) nodes=${1#*=}; shift ;;
      --rate) [[ $# -ge 2 ]] || die "--rate needs a value such as 2gbit or none"; rate=$2; shift 2 ;;
      --rate=*) rate=${1#*=}; shift ;;
      --mtu) [[ $# -ge 2 ]] || die "--mtu needs a number of bytes"; mtu=$2; shift 2 ;;
      --mtu=*) mtu=${1#*=}; shift ;;
      --cpus) [[ $# -ge 2 ]] || die "--cpus needs split or shared"; cpus=$2; shift 2 ;;
      --cpus=*) cpus=${1#*=}; shift ;;
      --local) local=1; shift ;;
      --stats) stats=1; shift ;;
      --capture) [[ $# -ge 2 ]] || die "--capture needs a file name"; capture=$2; shift 2 ;;
      --capture=*) capture=${1#*=}; shift ;;
      -h|--help) usage; exit 0 ;;
      --) shift; break ;;
      *) usage >&2; die "unknown option '$1' (the program to run goes after --)" ;;
    esac
  done
  (($#)) || { usage >&2; die "no program given: put it after --"; }
  cmd=("$@")
  case $mpi in openmpi|mpich) ;; *) die "--mpi '$mpi': use openmpi or mpich" ;; esac
  [[ $nodes =~ ^[1-9][0-9]*$ ]] && ((nodes <= 64)) || die "--nodes '$nodes': use 1 to 64"
  [[ -z $np ]] && np=$nodes
  [[ $np =~ ^[1-9][0-9]*$ ]] || die "-n '$np': use a positive number of ranks"
  case $cpus in split|shared) ;; *) die "--cpus '$cpus': use split or shared" ;; esac
  [[ $mtu =~ ^[0-9]+$ ]] && ((mtu >= 1280 && mtu <= 65535)) || die "--mtu '$mtu': use 1280 to 65535"
  if [[ $rate != none ]]; then
    [[ $rate =~ ^[0-9]+(\.[0-9]+)?([kmg]?(bit|bps))$ ]] \
      || die "--rate '$rate': use a tc rate such as 2gbit, 500mbit, 100mbps, or none"
  fi
}

# ---- launchers ------------------------------------------------------------------------------
openmpi_exec() { command -v mpirun.openmpi || command -v mpiexec.openmpi || true; }
mpich_exec() { command -v mpiexec.mpich || command -v mpiexec.hydra || true; }

launcher_for() {
  local exe
  if [[ $mpi == openmpi ]]; then exe=$(openmpi_exec); else exe=$(mpich_exec); fi
  [[ -n $exe ]] || die "no $mpi launcher found: install $([[ $mpi == openmpi ]] && echo openmpi-bin || echo mpich)"
  echo "$exe"
}

root_flags() {
  if [[ $(id -u) -eq 0 && $mpi == openmpi ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}

run_local() {
  local exe status=0
  exe=$(launcher_for)
  root_flags
  if [[ $mpi == openmpi ]]; then
    "$exe" --oversubscribe --bind-to none -n "$np" "${cmd[@]}" || status=$?
  else
    "$exe" -n "$np" "${cmd[@]}" || status=$?
  fi
  return $status
}

# ---- namespaces -----------------------------------------------------------------------------
can_make_nodes() {
  # Prints why not, and fails, when namespaces cannot be made here.
  if [[ $(id -u) -ne 0 ]]; then echo "not running as root"; return 1; fi
  if ! command -v ip >/dev/null; then echo "'ip' is missing (apt-get install iproute2)"; return 1; fi
  if [[ $rate != none ]] && ! command -v tc >/dev/null; then
    echo "'tc' is missing (apt-get install iproute2)"; return 1
  fi
  local probe="${PREFIX}$$probe"
  if ! ip netns add "$probe" 2>/dev/null; then echo "this kernel or container does not allow network namespaces"; return 1; fi
  ip netns del "$probe" 2>/dev/null || true
}

created=()     # namespaces this run made, removed by cleanup
tmpdir=""

cleanup() {
  local ns pids
  for ns in "${created[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] && kill -TERM $pids 2>/dev/null || true
  done
  if ((${#created[@]})); then
    sleep 0.2
    for ns in "${created[@]}"; do
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
    done
  fi
  for ns in "${created[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  created=()
  [[ -n $tmpdir ]] && rm -rf "$tmpdir"
  tmpdir=""
}

# Applies the bandwidth limit to a device's egress. burst: 1 ms at the rate, at least 64 KiB,
# so that veth's GSO segments pass and the rate holds.
limit() {
  local ns=$1 dev=$2
  [[ $rate == none ]] && return 0
  local bits
  bits=$(rate_bits "$rate")
  local burst=$((bits / 8 / 1000))
  ((burst < 65536)) && burst=65536
  ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 50ms
}

rate_bits() {
  local r=$1 n unit mult=1
  n=${r%%[kmgbp]*}; unit=${r#"$n"}
  case $unit in
    kbit) mult=1000 ;; mbit) mult=1000000 ;; gbit) mult=1000000000 ;; bit) mult=1 ;;
    kbps) mult=8000 ;; mbps) mult=8000000 ;; gbps) mult=8000000000 ;; bps) mult=8 ;;
  esac
  awk -v n="$n" -v m="$mult" 'BEGIN { printf "%.0f", n * m }'
}

# CPU list of node i: with --cpus split, the cores are dealt out in contiguous shares.
node_cpus() {
  local i=$1 allowed count share first last
  mapfile -t allowed < <(cpu_list)
  count=${#allowed[@]}
  if [[ $cpus == shared ]] || ((count == 0)); then
    local IFS=,; echo "${allowed[*]}"; return
  fi
  if ((nodes > count)); then
    echo "${allowed[$((i % count))]}"; return
  fi
  share=$((count / nodes))
  first=$((i * share)); last=$((first + share - 1))
  ((i == nodes - 1)) && last=$((count - 1))
  local out=() k
  for ((k = first; k <= last; ++k)); do out+=("${allowed[$k]}"); done
  local IFS=,; echo "${out[*]}"
}

# The CPUs this script may use, one per line.
cpu_list() {
  local mask
  mask=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //') || true
  [[ -z $mask ]] && mask="0-$(($(nproc --all) - 1))"
  local part a b
  IFS=, read -ra parts <<<"$mask"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then a=${part%-*}; b=${part#*-}; seq "$a" "$b"; else echo "$part"; fi
  done
}

make_nodes() {
  local id="${PREFIX}$$" i
  tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/hytask-cluster.XXXXXX")
  node_names=()
  for ((i = 0; i < nodes; ++i)); do
    node_names+=("${id}n$i")
    ip netns add "${id}n$i"; created+=("${id}n$i")
    ip netns exec "${id}n$i" ip link set lo up
  done
  if ((nodes == 2)); then
    ip link add "${id}a" type veth peer name "${id}b"
    ip link set "${id}a" netns "${node_names[0]}"
    ip link set "${id}b" netns "${node_names[1]}"
    for i in 0 1; do
      local dev; dev=$([[ $i == 0 ]] && echo "${id}a" || echo "${id}b")
      ip netns exec "${node_names[$i]}" ip link set "$dev" name eth0
    done
  elif ((nodes > 2)); then
    local br="${id}br"
    ip netns add "$br"; created+=("$br")
    ip netns exec "$br" ip link add br0 type bridge
    ip netns exec "$br" ip link set br0 up
    for ((i = 0; i < nodes; ++i)); do
      ip link add "${id}x$i" type veth peer name "${id}y$i"
      ip link set "${id}x$i" netns "${node_names[$i]}"
      ip link set "${id}y$i" netns "$br"
      ip netns exec "${node_names[$i]}" ip link set "${id}x$i" name eth0
      ip netns exec "$br" ip link set "${id}y$i" master br0
      ip netns exec "$br" ip link set "${id}y$i" mtu "$mtu" up
      limit "$br" "${id}y$i"
    done
  fi
  if ((nodes >= 2)); then
    for ((i = 0; i < nodes; ++i)); do
      ip netns exec "${node_names[$i]}" ip addr add "$SUBNET.$((i + 1))/24" dev eth0
      ip netns exec "${node_names[$i]}" ip link set eth0 mtu "$mtu" up
      limit "${node_names[$i]}" eth0
    done
  fi

  # The remote-shell agent both launchers use to start their daemons "on" a node: it runs
  # the command inside that node's namespace, on that node's CPUs.
  local agent="$tmpdir/agent"
  {
    echo '#!/bin/sh'
    echo '# cluster.sh agent: HOST COMMAND... -> run COMMAND in the namespace HOST'
    echo 'host=$1; shift'
    echo 'case $host in'
    for ((i = 0; i < nodes; ++i)); do
      echo "  ${node_names[$i]}) cpus=$(node_cpus "$i") ;;"
    done
    echo '  *) echo "cluster.sh agent: unknown node $host" >&2; exit 1 ;;'
    echo 'esac'
    echo 'exec ip netns exec "$host" taskset -c "$cpus" sh -c "$*"'
  } >"$agent"
  chmod +x "$agent"
  hostfile="$tmpdir/hosts"
  local per=$(((np + nodes - 1) / nodes))
  for ((i = 0; i < nodes; ++i)); do echo "${node_names[$i]} slots=$per"; done >"$hostfile"
}

print_stats() {
  local i ns tx rx
  for ((i = 0; i < nodes; ++i)); do
    ns=${node_names[$i]}
    tx=$(ip netns exec "$ns" cat /sys/class/net/eth0/statistics/tx_bytes 2>/dev/null || echo 0)
    rx=$(ip netns exec "$ns" cat /sys/class/net/eth0/statistics/rx_bytes 2>/dev/null || echo 0)
    say "node $i ($SUBNET.$((i + 1))): sent $tx bytes, received $rx bytes over its link"
  done
}

run_cluster() {
  local exe status=0
  exe=$(launcher_for)
  root_flags
  make_nodes
  local head=${node_names[0]} hosts
  hosts=$(IFS=,; echo "${node_names[*]}")
  say "$nodes nodes ($hosts), link $rate, $np ranks, $mpi, cpus $cpus:$(for ((i = 0; i < nodes; ++i)); do printf ' [%s]' "$(node_cpus "$i")"; done)"
  local launch
  if [[ $mpi == openmpi ]]; then
    # Flags checked on these machines (DESIGN.md): TCP only, daemons started through the
    # agent and wired directly, no binding (a node's ranks keep its CPU set), and no hwloc
    # shared-memory topology (a daemon crashes in it about one start in six).
    # One-sided windows (hytask's PGAS objects) between nodes: over pml ob1 only osc pt2pt
    # is left, which fails to create them (MPI_ERR_WIN); UCX's osc works over TCP.
    export UCX_TLS=tcp,self
    launch=("$exe" --hostfile "$hostfile" -n "$np" --map-by node
            --mca plm_rsh_agent "$tmpdir/agent" --mca routed direct
            --mca pml ob1 --mca btl self,tcp --mca osc ucx
            --mca btl_tcp_if_include "$SUBNET.0/24" --mca oob_tcp_if_include "$SUBNET.0/24"
            --bind-to none --mca rtc_hwloc_vmhole none "${cmd[@]}")
  else
    # Debian's MPICH is ch4:ucx: without UCX_TLS it would use shared memory between nodes.
    export UCX_TLS=tcp,self
    launch=("$exe" -launcher rsh -launcher-exec "$tmpdir/agent" -hosts "$hosts"
            -iface eth0 -n "$np" "${cmd[@]}")
  fi
  local capturer=""
  if [[ -n $capture ]]; then
    command -v tcpdump >/dev/null || die "--capture needs tcpdump: apt-get install tcpdump"
    # Whole packets (the analysis rebuilds the streams), a large buffer so that none is dropped.
    ip netns exec "$head" tcpdump -i eth0 -s 0 -B 131072 -U -w "$capture" 2>/dev/null &
    capturer=$!
    sleep 0.5  # tcpdump is listening before the job starts
  fi
  if [[ $mpi == openmpi ]]; then
    # Open MPI warns "setpgid failed" whenever the agent has exec'd before it asks: harmless.
    ip netns exec "$head" taskset -c "$(node_cpus 0)" "${launch[@]}" \
      2> >(grep -v --line-buffered 'plm:rsh: Warning: setpgid' >&2) &
  else
    ip netns exec "$head" taskset -c "$(node_cpus 0)" "${launch[@]}" &
  fi
  wait $! || status=$?
  if [[ -n $capturer ]]; then
    kill -INT "$capturer" 2>/dev/null || true
    wait "$capturer" 2>/dev/null || true
    say "capture of node 0's link: $capture"
  fi
  ((stats)) && print_stats
  return $status
}

# ---- subcommands ----------------------------------------------------------------------------
cmd_run() {
  parse_run_args "$@"
  if ((local == 0)) && ((nodes >= 2)); then
    local why
    if why=$(can_make_nodes); then
      trap cleanup EXIT
      trap 'exit 130' INT
      trap 'exit 143' TERM
      run_cluster
      return
    fi
    say "warning: cannot make network nodes ($why);"
    say "warning: running on plain localhost instead: messages go through shared memory, so"
    say "warning: overlap figures from this run do not tell how a real network behaves."
  fi
  run_local
}

cmd_check() {
  nodes=2 rate=2gbit
  local why
  if why=$(can_make_nodes); then
    say "ok: this machine can make network nodes (namespaces, veth, tbf)"
  else
    say "no: $why; cluster.sh run would fall back to plain localhost"
    return 1
  fi
}

cmd_clean() {
  local ns pid removed=0
  [[ $(id -u) -eq 0 ]] || die "clean needs root"
  while read -r ns _; do
    [[ $ns =~ ^${PREFIX}([0-9]+)(n[0-9]+|br)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    if kill -0 "$pid" 2>/dev/null; then continue; fi  # its run is still going
    local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" && removed=$((removed + 1))
  done < <(ip netns list 2>/dev/null)
  say "removed $removed namespace(s) left by runs that no longer exist"
}

case ${1:-} in
  run) shift; cmd_run "$@" ;;
  check) cmd_check ;;
  clean) cmd_clean ;;
  -h|--help|help) usage ;;
  "") usage >&2; die "no subcommand: use run, check or clean" ;;
  *) usage >&2; die "unknown subcommand '$1': use run, check or clean" ;;
esac
