#!/usr/bin/env python3
"""Where a traced hytask run spent its threads' time: per rank and thread, the time in task
slices, in MPI polls that moved data or completed something ('poll' slices), the node
agent's wake and suppressed-wake marks, and the polls the agent asked for ('woken poll':
how late each started after its wake and how long it took, medians). Reads the per-rank
files HYTASK_TRACE writes.

    bench/trace_summary.py run.rank0.json [run.rank1.json ...]

Used in docs/benchmarks.md (node-wide progress agent) to show how much of the progress
threads' CPU is the polls themselves (copying TCP data) rather than waking up. For each
rank's busy, idle and MPI time and its tasks by name, use `hytask-trace summary`
(docs/tracing.md); this script adds the node agent's wake-ups and their latencies.
"""
import json
import sys
from collections import defaultdict


def summarize(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {}
    first, last = None, None
    per = defaultdict(lambda: {"task_us": 0.0, "poll_us": 0.0, "polls": 0, "wakes": 0,
                               "suppressed": 0, "late": [], "woken_us": []})
    for e in events:
        ph = e.get("ph")
        tid = (e.get("pid"), e.get("tid"))
        if ph == "M" and e.get("name") == "thread_name":
            names[tid] = e["args"]["name"]
            continue
        ts = e.get("ts")
        if ts is None:
            continue
        end = ts + e.get("dur", 0)
        first = ts if first is None else min(first, ts)
        last = end if last is None else max(last, end)
        row = per[tid]
        if ph == "X" and e.get("cat") == "task":
            row["task_us"] += e["dur"]
        elif ph == "X" and e.get("name") == "poll":
            row["poll_us"] += e["dur"]
            row["polls"] += 1
        elif ph == "i" and e.get("name") == "node wake":
            row["wakes"] += 1
        elif ph == "i" and e.get("name") == "node wake suppressed":
            row["suppressed"] += 1
        elif ph == "i" and e.get("name") == "woken poll":
            row["late"].append(e["args"].get("late_us", 0))
            row["woken_us"].append(e["args"].get("poll_us", 0))
    span = (last - first) if first is not None else 0.0
    return span, names, per


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print(f"{'file':<28} {'thread':<22} {'tasks %':>8} {'polls %':>8} {'polls':>8} "
          f"{'wakes':>7} {'suppr.':>7} {'woken':>7} {'late us':>8} {'poll us':>8}")
    for path in paths:
        span, names, per = summarize(path)
        if span <= 0:
            print(f"{path}: no timed events", file=sys.stderr)
            continue
        for tid, row in sorted(per.items(), key=lambda kv: str(names.get(kv[0], kv[0]))):
            name = names.get(tid, f"tid {tid[1]}")
            late = sorted(row["late"])
            took = sorted(row["woken_us"])
            med = (lambda v: f"{v[len(v) // 2]:8d}" if v else f"{'':>8}")
            print(f"{path[-28:]:<28} {name[:22]:<22} {100 * row['task_us'] / span:8.1f} "
                  f"{100 * row['poll_us'] / span:8.2f} {row['polls']:8d} {row['wakes']:7d} "
                  f"{row['suppressed']:7d} {len(late):7d} {med(late)} {med(took)}")
        print(f"{path[-28:]:<28} {'(span of the trace)':<22} {span / 1e6:7.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
