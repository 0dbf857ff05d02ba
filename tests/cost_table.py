#!/usr/bin/env python3
"""What the test suite costs, by group: the table of DEVELOPERS.md ("Tests: what a run costs").

    tests/cost_table.py [BUILD_DIR]        (default: build)

Reads the tests the build tree registers (ctest --show-only, with their labels: `full`
marks the full tier), ctest's record of each test's last duration
(Testing/Temporary/CTestCostData.txt) and ninja's log (.ninja_log: every compile and link,
with its start and end), and prints a Markdown table: per group, the default tier's tests,
their summed seconds and share, what the full tier adds, and the build's CPU seconds and
wall time (of a build from scratch; after an incremental one, only the CPU seconds of what
it rebuilt mean anything). Summed seconds are one process at a time: ctest -j2 overlaps them.
"""
import collections
import json
import os
import re
import subprocess
import sys

GROUPS = [  # (pattern on the test name, group); the first match wins
    (r"^tsan\.mpi\.(openmpi|mpich)\.", r"TSan MPI, \1"),
    (r"^tsan\.", "unit, TSan"),
    (r"^asan\.omp\.", "omp, ASan"),
    (r"^asan\.", "unit, ASan"),
    (r"^mpi\.(openmpi|mpich)\.", r"MPI, \1"),
    (r"^omp\.(gcc|clang)\.(openmpi|mpich)\.", r"omp, \2"),
    (r"^(jacobi3d|jacobi3d-clang|hpl|cholesky)\.(openmpi|mpich)\.", r"apps, \2"),
    (r"^(jacobi3d|hpl|cholesky)\.rejects", "apps, usage errors"),
    (r"^docs\.", "docs"),
    (r"^example_", "examples"),
    (r"^install", "install"),
    (r"^taskbench\.", "taskbench"),
    (r"^cluster\.", "cluster"),
    (r"^(overlap|tools)\.", "tools"),
    (r"^bench\.", "bench"),
    (r"^compile_error\.", "compile errors"),
    (r".", "unit"),
]


def group(name):
    for pattern, label in GROUPS:
        m = re.match(pattern, name)
        if m:
            return m.expand(label)
    return "other"


def registered_tests(build):
    """The tests this build tree registers, each with whether it is in the full tier only."""
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    tests = {}
    for t in json.loads(out)["tests"]:
        labels = []
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = p["value"]
        tests[t["name"]] = "full" in labels
    return tests


def test_costs(build):
    """Seconds and counts per (group, tier) for the registered tests ctest has timed."""
    tests = registered_tests(build)
    path = os.path.join(build, "Testing", "Temporary", "CTestCostData.txt")
    seconds, count = collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            if line.startswith("---"):
                break  # the failed tests follow
            parts = line.rsplit(" ", 2)
            if len(parts) == 3 and parts[0] in tests:
                key = (group(parts[0]), "full" if tests[parts[0]] else "default")
                seconds[key] += float(parts[2])
                count[key] += 1
    untimed = len(tests) - sum(count.values())
    return seconds, count, untimed


def build_costs(build):
    path = os.path.join(build, ".ninja_log")
    if not os.path.exists(path):
        return None
    last = {}  # ninja appends: the last line of each output is its last build
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, output, _ = line.rstrip("\n").split("\t")
            last[output] = (int(start), int(end))
    if not last:
        return None
    # Times are relative to the start of each ninja run: meaningful for a build from scratch.
    cpu = sum(e - s for s, e in last.values()) / 1000
    wall = (max(e for _, e in last.values()) - min(s for s, _ in last.values())) / 1000
    return cpu, wall


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    seconds, count, untimed = test_costs(build)
    groups = sorted({g for g, _ in seconds}, key=lambda g: -sum(seconds[(g, t)] for t in ("default", "full")))
    tiers = ("default", "full")
    total = {t: sum(v for (g, tt), v in seconds.items() if tt == t) for t in tiers}
    print("| group | default tier: tests | seconds | share | full tier adds: tests | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    for g in groups:
        d, f = (g, "default"), (g, "full")
        share = 100 * seconds[d] / total["default"] if total["default"] else 0
        print(f"| {g} | {count[d]} | {seconds[d]:.0f} | {share:.0f} % | {count[f]} | {seconds[f]:.0f} |")
    print(f"| **all** | {sum(c for (g, t), c in count.items() if t == 'default')} | "
          f"{total['default']:.0f} | | {sum(c for (g, t), c in count.items() if t == 'full')} | "
          f"{total['full']:.0f} |")
    if untimed:
        print(f"\n{untimed} registered tests have no recorded time yet (not run in this tree).")
    b = build_costs(build)
    if b:
        print(f"\nBuild (ninja's log, the last build of each output): {b[0]:.0f} CPU seconds, "
              f"{b[1]:.0f} s from the first compile to the last link.")


if __name__ == "__main__":
    main()
