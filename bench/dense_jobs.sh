# shellcheck shell=bash
# What the dense apps' benchmark runners share (bench/run_cholesky_bench.sh,
# bench/run_weak_scaling.sh): sourced, not run. One job of apps/cholesky or apps/qr, on this
# machine or on the cluster in a box (scripts/cluster.sh), its CSV and output kept.
#
# The caller sets `root` (the repository) and may set, before calling dense_job:
#   dense_rate      bandwidth of the cluster's links, as tc understands it (default 1gbit)
#   dense_timeout   seconds a cluster job may take (default 3600)

export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STARPU_SILENT=1

# The first CPU this process may run on: a 1-node "cluster" gets one core, as each node of a
# larger one does (cluster.sh --cpus split).
dense_first_cpu() {
  local mask
  mask=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //') || true
  mask=${mask%%,*}
  echo "${mask%%-*}"
}

# How many CPUs this process may run on.
dense_cpu_count() { nproc; }

# dense_job OUT TAG WHERE MPI EXE ARGS...: one job of the dense app EXE (its options ARGS)
# with --csv OUT/TAG.csv, its standard output in OUT/TAG.txt; prints the result lines as
# they come. WHERE is
#   node:R     R ranks on this machine, shared memory (Open MPI without binding)
#   cluster:N  N nodes of the cluster in a box, one rank each, joined by dense_rate links;
#              N = 1 is one rank on one core of this machine (no link)
# Returns the job's exit status.
dense_job() {
  local out=$1 tag=$2 where=$3 mpi=$4 exe=$5
  shift 5
  local -a launch
  case $where in
    node:*)
      if [[ $mpi == mpich ]]; then launch=(mpiexec.mpich -n "${where#node:}")
      else launch=(mpiexec -n "${where#node:}" --bind-to none); fi
      ;;
    cluster:*)
      local nodes=${where#cluster:}
      launch=(timeout "${dense_timeout:-3600}" "$root/scripts/cluster.sh" run --mpi "$mpi" --nodes "$nodes"
              -n "$nodes" --rate "${dense_rate:-1gbit}" --)
      ((nodes == 1)) && launch=(taskset -c "$(dense_first_cpu)" "${launch[@]}")
      ;;
    *) echo "dense_job: WHERE '$where': use node:RANKS or cluster:NODES" >&2; return 2 ;;
  esac
  echo "== $tag ($where, $mpi): $(basename "$exe") $*"
  local status=0
  "${launch[@]}" "$exe" --csv "$out/$tag.csv" "$@" | tee "$out/$tag.txt" |
    { grep --line-buffered -E '^(hytask|scalapack|starpu) |DGEMM peak|FAILED|memory per rank|^Finished' || true; } ||
    status=${PIPESTATUS[0]}
  ((status == 0)) || echo "== $tag: exit status $status (output in $out/$tag.txt)" >&2
  return "$status"
}
