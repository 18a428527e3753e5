#!/usr/bin/env python3
"""An executable planner for `runlab bench`, in Python: a plain RRT for a point robot in
the unit square with one wall, speaking runlab's planner line protocol (docs/bench.md)
on standard output. Diagnostics go to standard error (the run's console file)."""
import math
import os
import random
import sys
import time


def main():
    seed = int(os.environ.get("RUNLAB_SEED", "0"))
    max_time = float(os.environ.get("RUNLAB_MAX_TIME", "1"))
    rng = random.Random(seed)
    start, goal, radius, step = (0.1, 0.5), (0.9, 0.5), 0.03, 0.05

    def free(p):  # a wall at x in [0.45, 0.55] with a gap at y in [0.7, 0.8]
        return not (0.45 <= p[0] <= 0.55 and not 0.7 <= p[1] <= 0.8)

    def motion_free(a, b):
        n = max(1, int(math.dist(a, b) / 0.005))
        return all(free((a[0] + (b[0] - a[0]) * i / n, a[1] + (b[1] - a[1]) * i / n))
                   for i in range(n + 1))

    nodes, parent = [start], [-1]
    t0 = time.monotonic()
    found = -1
    while time.monotonic() - t0 < max_time:
        q = goal if rng.random() < 0.05 else (rng.random(), rng.random())
        i = min(range(len(nodes)), key=lambda k: math.dist(nodes[k], q))
        d = math.dist(nodes[i], q)
        s = min(1.0, step / d) if d > 0 else 0
        new = (nodes[i][0] + (q[0] - nodes[i][0]) * s, nodes[i][1] + (q[1] - nodes[i][1]) * s)
        if not motion_free(nodes[i], new):
            continue
        nodes.append(new)
        parent.append(i)
        print(f"progress\tgraph states\t{len(nodes)}", flush=True)
        if math.dist(new, goal) <= radius:
            found = len(nodes) - 1
            break
    elapsed = time.monotonic() - t0
    print(f"time\t{elapsed:.9f}")
    print(f"property\tgraph states\tINTEGER\t{len(nodes)}")
    if found >= 0:
        length, k = 0.0, found
        while parent[k] >= 0:
            length += math.dist(nodes[k], nodes[parent[k]])
            k = parent[k]
        print(f"property\tsolution length\tREAL\t{length:.9g}")
        print("status\texact")
    else:
        print("status\ttimeout")
    print(f"python planner: {len(nodes)} states", file=sys.stderr)


if __name__ == "__main__":
    main()
