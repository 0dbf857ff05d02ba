#!/usr/bin/env python3
"""Summarises bench/run_node_program.sh's results.txt: per MPI, ranks per node and setting,
the median over the repetitions (and the range) of overlap %, compute speed % and progress
cores per node, of hytask's variant (and of plain MPI under MPICH_ASYNC_PROGRESS=1), and
node's figures against thread's from the same repetition.

    bench/node_program_table.py build/node-program/results.txt
"""
import statistics
import sys
from collections import defaultdict


def parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            d = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if d:
                rows.append(d)
    return rows


def cell(values, fmt):
    if not values:
        return ""
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return (fmt + " ({}–{})").format(med, fmt.format(min(values)), fmt.format(max(values)))


def main(path):
    rows = parse(path)
    # The measured variant of each setting: hytask's, or plain MPI under MPICH's async thread.
    data = defaultdict(lambda: defaultdict(list))
    per_rep = defaultdict(dict)
    for r in rows:
        setting = r["setting"]
        if setting == "mpich-async":
            if r["variant"] != "mpi":
                continue
        elif r["variant"] != "hytask":
            if r["variant"] == "mpi":
                key = (r["mpi"], int(r["ranks_per_node"]), "plain MPI (" + setting + " job)")
                data[key]["overlap"].append(float(r["overlap_pct"]))
                data[key]["speed"].append(float(r["speed_pct"]))
                data[key]["cores"].append(float(r["progress_cores"]))
            continue
        key = (r["mpi"], int(r["ranks_per_node"]), setting)
        data[key]["overlap"].append(float(r["overlap_pct"]))
        data[key]["speed"].append(float(r["speed_pct"]))
        data[key]["cores"].append(float(r["progress_cores"]))
        per_rep[(r["mpi"], int(r["ranks_per_node"]), r["rep"])][setting] = r
    order = ["workers", "thread", "node", "mpich-async"]
    print("| MPI | ranks per node | setting | overlap % | compute speed % | progress cores per node |")
    print("|---|---:|---|---:|---:|---:|")
    for key in sorted(data, key=lambda k: (k[0], k[1], order.index(k[2]) if k[2] in order else 9, k[2])):
        if key[2].startswith("plain MPI") and "workers" not in key[2]:
            continue  # one plain-MPI row per MPI and ranks per node
        d = data[key]
        name = "plain MPI" if key[2].startswith("plain MPI") else key[2]
        if name == "mpich-async":
            name = "plain MPI, `MPICH_ASYNC_PROGRESS=1`"
        print(f"| {key[0]} | {key[1]} | {name} | {cell(d['overlap'], '{:.0f}')} | "
              f"{cell(d['speed'], '{:.0f}')} | {cell(d['cores'], '{:.3f}')} |")
    print()
    print("| MPI | ranks per node | rep | node − thread overlap, points | node / thread progress cores |")
    print("|---|---:|---:|---:|---:|")
    for key in sorted(per_rep):
        s = per_rep[key]
        if "node" in s and "thread" in s:
            n, t = s["node"], s["thread"]
            dov = float(n["overlap_pct"]) - float(t["overlap_pct"])
            tc = float(t["progress_cores"])
            ratio = float(n["progress_cores"]) / tc if tc > 0 else float("nan")
            print(f"| {key[0]} | {key[1]} | {key[2]} | {dov:+.0f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
