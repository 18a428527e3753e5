#!/usr/bin/env python3
"""An executable planner for `runlab bench`, in Python with the standard library only:
RRT-Connect over the problem runlab describes in RUNLAB_PROBLEM_FILE (the JSON format
"runlab-problem/1" of docs/bench.md), for every robot kind it describes: point robots,
rigid bodies with a heading and forward-only cars (Dubins curves). It speaks runlab's line
protocol on standard output; diagnostics and the solution path (one `runlab-path:` line)
go to standard error, the run's console file.

Settings (spec `settings:`, passed as RUNLAB_SETTINGS): range (longest motion added to a
tree, default 0.1), max_iterations (a budget of iterations, default 0: none)."""
import json
import math
import os
import random
import sys
import time


def fail(message):
    print(f"error\t{message}", flush=True)
    sys.exit(1)


def wrap(a):
    """a in [-pi, pi)."""
    return (a + math.pi) % (2 * math.pi) - math.pi


def angle_diff(a, b):
    """b - a the shorter way round."""
    return wrap(b - a)


# ---- Dubins curves (the car's motions): six words of arcs and lines ----------------------

def _mod2pi(a):
    """a in [0, 2 pi); a hair below 2 pi is 0 (a zero-length arc): no shortest curve turns a full circle."""
    r = a % (2 * math.pi)
    return 0.0 if r > 2 * math.pi - TOL else r


# Rounding can put a word that joins the ends exactly (a lone arc or line) just outside its
# domain; losing it would turn the curve to a point on another curve into a loop.
TOL = 1e-9


def _dubins_words(d, a, b):
    sa, sb, ca, cb, cab = math.sin(a), math.sin(b), math.cos(a), math.cos(b), math.cos(a - b)
    tmp = 2 + d * d - 2 * cab + 2 * d * (sa - sb)
    if tmp >= -TOL:
        tmp = max(tmp, 0.0)
        if tmp < 1e-12:  # one circle: a lone arc (the line's direction is noise)
            yield "LSL", (_mod2pi(b - a), 0.0, 0.0)
        else:
            p = math.atan2(cb - ca, d + sa - sb)
            yield "LSL", (_mod2pi(p - a), math.sqrt(tmp), _mod2pi(b - p))
    tmp = 2 + d * d - 2 * cab + 2 * d * (sb - sa)
    if tmp >= -TOL:
        tmp = max(tmp, 0.0)
        if tmp < 1e-12:
            yield "RSR", (_mod2pi(a - b), 0.0, 0.0)
        else:
            p = math.atan2(ca - cb, d - sa + sb)
            yield "RSR", (_mod2pi(a - p), math.sqrt(tmp), _mod2pi(p - b))
    tmp = -2 + d * d + 2 * cab + 2 * d * (sa + sb)
    if tmp >= -TOL:
        tmp = max(tmp, 0.0)
        s = math.sqrt(tmp)
        p = math.atan2(-ca - cb, d + sa + sb) - math.atan2(-2, s)
        yield "LSR", (_mod2pi(p - a), s, _mod2pi(p - b))
    tmp = d * d - 2 + 2 * cab - 2 * d * (sa + sb)
    if tmp >= -TOL:
        tmp = max(tmp, 0.0)
        s = math.sqrt(tmp)
        p = math.atan2(ca + cb, d - sa - sb) - math.atan2(2, s)
        yield "RSL", (_mod2pi(a - p), s, _mod2pi(b - p))
    tmp = (6 - d * d + 2 * cab + 2 * d * (sa - sb)) / 8
    if abs(tmp) <= 1 + TOL:
        tmp = max(-1.0, min(1.0, tmp))
        m = _mod2pi(2 * math.pi - math.acos(tmp))
        t = _mod2pi(a - math.atan2(ca - cb, d - sa + sb) + m / 2)
        yield "RLR", (t, m, _mod2pi(a - b - t + m))
    tmp = (6 - d * d + 2 * cab + 2 * d * (sb - sa)) / 8
    if abs(tmp) <= 1 + TOL:
        tmp = max(-1.0, min(1.0, tmp))
        m = _mod2pi(2 * math.pi - math.acos(tmp))
        t = _mod2pi(-a - math.atan2(ca - cb, d + sa - sb) + m / 2)
        yield "LRL", (t, m, _mod2pi(b - a - t + m))


def dubins(q0, q1, rho):
    """The shortest forward curve from q0 to q1: (word, segment lengths in units of rho)."""
    dx, dy = q1[0] - q0[0], q1[1] - q0[1]
    d = math.hypot(dx, dy) / rho
    phi = math.atan2(dy, dx) if d > 0 else 0.0
    return min(_dubins_words(d, _mod2pi(q0[2] - phi), _mod2pi(q1[2] - phi)),
               key=lambda w: sum(w[1]))


def dubins_at(q0, curve, rho, s):
    """The state at arc length s along the curve from q0."""
    x, y, th = 0.0, 0.0, q0[2]
    t = s / rho
    for letter, seg in zip(curve[0], curve[1]):
        if t <= 0:
            break
        u = min(t, seg)
        t -= u
        if letter == "L":
            x, y, th = x + math.sin(th + u) - math.sin(th), y + math.cos(th) - math.cos(th + u), th + u
        elif letter == "R":
            x, y, th = x + math.sin(th) - math.sin(th - u), y + math.cos(th - u) - math.cos(th), th - u
        else:
            x, y = x + u * math.cos(th), y + u * math.sin(th)
    return (q0[0] + x * rho, q0[1] + y * rho, wrap(th))


# ---- the problem: state space and collision checking --------------------------------------

class Problem:
    def __init__(self, doc):
        if doc.get("format") != "runlab-problem/1":
            raise ValueError(f"format {doc.get('format')!r} (this planner reads runlab-problem/1)")
        self.wdim = doc["workspace"]["dimension"]
        self.low, self.high = doc["workspace"]["low"], doc["workspace"]["high"]
        coords = doc["state"]["coordinates"]
        self.dim = len(coords)
        self.yaw = coords.index("yaw") if "yaw" in coords else -1
        robot = doc["robot"]
        self.kind = robot["kind"]
        if self.kind not in ("point", "rigid", "car"):
            raise ValueError(f"robot kind {self.kind!r}")
        self.half = [s / 2 for s in robot.get("size", [])]
        self.rho = robot.get("turning_radius", 0.0)
        self.yaw_weight = doc["distance"].get("yaw_weight", 0.0)
        self.start, self.goal = tuple(doc["start"]), tuple(doc["goal"])
        self.tolerance = doc["goal_tolerance"]
        self.resolution = doc["resolution"]
        # States are kept `clearance` from obstacles; a point robot keeps half the resolution
        # besides, so that every point of a checked motion is free, not just its samples.
        self.margin = doc.get("clearance", 0.0)
        if self.kind == "point":
            self.margin = max(self.margin, self.resolution / 2 * 1.01)
        self.boxes = []
        for i, o in enumerate(doc["obstacles"]):
            if o.get("shape") != "box":
                raise ValueError(f"obstacles[{i}]: shape {o.get('shape')!r}")
            self.boxes.append((o["min"], o["max"]))
        self.directed = self.kind == "car"  # a car's distance is not symmetric

    def dist(self, a, b):
        if self.kind == "car":
            return sum(dubins(a, b, self.rho)[1]) * self.rho
        s = 0.0
        for i in range(self.dim):
            d = self.yaw_weight * angle_diff(a[i], b[i]) if i == self.yaw else b[i] - a[i]
            s += d * d
        return math.sqrt(s)

    def interpolate(self, a, b, t):
        if self.kind == "car":
            curve = dubins(a, b, self.rho)
            return dubins_at(a, curve, self.rho, t * sum(curve[1]) * self.rho)
        return tuple(wrap(a[i] + t * angle_diff(a[i], b[i])) if i == self.yaw
                     else a[i] + t * (b[i] - a[i]) for i in range(self.dim))

    def sample(self, rng):
        return tuple(rng.uniform(-math.pi, math.pi) if i == self.yaw
                     else rng.uniform(self.low[i], self.high[i]) for i in range(self.dim))

    def valid(self, q):
        m = self.margin
        if self.kind == "point":
            if any(not self.low[i] <= q[i] <= self.high[i] for i in range(self.dim)):
                return False
            return not any(all(lo[i] - m <= q[i] <= hi[i] + m for i in range(self.dim))
                           for lo, hi in self.boxes)
        c, s = math.cos(q[self.yaw]), math.sin(q[self.yaw])
        hx, hy = self.half[0], self.half[1]
        for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
            x, y = q[0] + sx * hx * c - sy * hy * s, q[1] + sx * hx * s + sy * hy * c
            if not (self.low[0] + m <= x <= self.high[0] - m and self.low[1] + m <= y <= self.high[1] - m):
                return False
        if self.wdim == 3 and not (self.low[2] + m <= q[2] - self.half[2] and
                                   q[2] + self.half[2] <= self.high[2] - m):
            return False
        # half extents of the footprint along x and y (projection on the box's axes)
        ex, ey = hx * abs(c) + hy * abs(s), hx * abs(s) + hy * abs(c)
        for lo, hi in self.boxes:
            if self.wdim == 3 and (q[2] + self.half[2] < lo[2] - m or q[2] - self.half[2] > hi[2] + m):
                continue
            bx, by = (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2
            bhx, bhy = (hi[0] - lo[0]) / 2 + m, (hi[1] - lo[1]) / 2 + m
            dx, dy = bx - q[0], by - q[1]
            # separating-axis test: the box's two axes, then the body's two
            if abs(dx) > bhx + ex or abs(dy) > bhy + ey:
                continue
            if abs(dx * c + dy * s) > hx + bhx * abs(c) + bhy * abs(s):
                continue
            if abs(-dx * s + dy * c) > hy + bhx * abs(s) + bhy * abs(c):
                continue
            return False
        return True

    def motion_valid(self, a, b):
        """The states from a to b no further apart than the resolution, both ends included."""
        n = math.ceil(self.dist(a, b) / self.resolution)
        if self.kind == "car" and n > 0:
            curve = dubins(a, b, self.rho)
            length = sum(curve[1]) * self.rho
            states = (dubins_at(a, curve, self.rho, length * k / n) for k in range(1, n + 1))
        else:
            states = (self.interpolate(a, b, k / n) for k in range(1, n + 1))
        return self.valid(a) and all(self.valid(q) for q in states)


# ---- RRT-Connect ------------------------------------------------------------------------

class Tree:
    def __init__(self, root, forward):
        self.states, self.parent, self.forward = [root], [-1], forward

    def path_to_root(self, i):
        out = []
        while i >= 0:
            out.append(self.states[i])
            i = self.parent[i]
        return out


def extend(pr, tree, target, step):
    """Grows the tree at most `step` towards target. A forward tree (from the start) adds
    motions from its nodes; the goal's tree adds motions into them, which differs for a
    car. Returns ("reached" | "advanced" | "trapped", index of the new node)."""
    f = tree.forward
    best, bd = 0, math.inf
    if pr.kind == "car":
        # a Dubins curve is no shorter than the straight line: visit the nodes by their
        # straight distance and stop when that alone exceeds the best curve
        order = sorted(range(len(tree.states)), key=lambda i: math.dist(tree.states[i][:2], target[:2]))
        for i in order:
            q = tree.states[i]
            if math.dist(q[:2], target[:2]) >= bd:
                break
            d = pr.dist(q, target) if f else pr.dist(target, q)
            if d < bd:
                best, bd = i, d
    else:
        for i, q in enumerate(tree.states):
            d = pr.dist(q, target) if f else pr.dist(target, q)
            if d < bd:
                best, bd = i, d
    near = tree.states[best]
    if bd <= step:
        new, outcome = target, "reached"
    elif f:
        new, outcome = pr.interpolate(near, target, step / bd), "advanced"
    else:
        new, outcome = pr.interpolate(target, near, 1 - step / bd), "advanced"
    if not (pr.motion_valid(near, new) if f else pr.motion_valid(new, near)):
        return "trapped", -1
    tree.states.append(new)
    tree.parent.append(best)
    return outcome, len(tree.states) - 1


def rrt_connect(pr, rng, step, max_iterations, deadline):
    a, b = Tree(pr.start, True), Tree(pr.goal, False)
    iterations = 0
    while time.monotonic() < deadline and (max_iterations <= 0 or iterations < max_iterations):
        iterations += 1
        outcome, i = extend(pr, a, pr.sample(rng), step)
        if outcome != "trapped":
            target = a.states[i]
            outcome, j = "advanced", -1
            while outcome == "advanced":
                outcome, j = extend(pr, b, target, step)
            if outcome == "reached":
                start_tree, goal_tree = (a, b) if a.forward else (b, a)
                si, gi = (i, j) if a.forward else (j, i)
                path = start_tree.path_to_root(si)[::-1] + goal_tree.path_to_root(gi)[1:]
                return path, iterations, len(a.states) + len(b.states)
        a, b = b, a
        print(f"progress\tgraph states\t{len(a.states) + len(b.states)}", flush=True)
    return None, iterations, len(a.states) + len(b.states)


def main():
    path_env = os.environ.get("RUNLAB_PROBLEM_FILE")
    if not path_env:
        fail(f"no RUNLAB_PROBLEM_FILE: problem '{os.environ.get('RUNLAB_PROBLEM', '')}' is not built in")
    try:
        with open(path_env, encoding="utf-8") as f:
            pr = Problem(json.load(f))
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        fail(f"{path_env}: {e}")
    settings = json.loads(os.environ.get("RUNLAB_SETTINGS") or "{}")
    step = float(settings.get("range", 0.1))
    max_iterations = int(settings.get("max_iterations", 0))
    rng = random.Random(int(os.environ.get("RUNLAB_SEED", "0")))
    max_time = float(os.environ.get("RUNLAB_MAX_TIME", "1"))
    print("start", flush=True)  # start-up (interpreter, imports, the problem) ends here
    t0 = time.monotonic()
    if not pr.valid(pr.start):
        print("status\tinvalid-start")
        return
    if not pr.valid(pr.goal):
        print("status\tinvalid-goal")
        return
    path, iterations, states = rrt_connect(pr, rng, step, max_iterations, t0 + max_time)
    print(f"time\t{time.monotonic() - t0:.9f}")
    print(f"property\tgraph states\tINTEGER\t{states}")
    print(f"property\titerations\tINTEGER\t{iterations}")
    if path:
        length = sum(pr.dist(path[k - 1], path[k]) for k in range(1, len(path)))
        print(f"property\tsolution length\tREAL\t{length:.9g}")
        print(f"property\tsolution segments\tINTEGER\t{len(path) - 1}")
        print("status\texact", flush=True)
        print("runlab-path: " + " ".join(",".join(repr(v) for v in q) for q in path), file=sys.stderr)
        if pr.kind == "car":  # the curve of each motion: word and segments in turning radii
            curves = (dubins(path[k - 1], path[k], pr.rho) for k in range(1, len(path)))
            print("runlab-motions: " + " ".join(w + "," + ",".join(repr(v) for v in seg) for w, seg in curves),
                  file=sys.stderr)
    else:
        print("status\ttimeout", flush=True)
    print(f"python planner: {states} states, {iterations} iterations", file=sys.stderr)


if __name__ == "__main__":
    main()
