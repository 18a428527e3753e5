#!/usr/bin/env python3
"""Independent check of paths reported by executable planners against a runlab problem file
(format runlab-problem/1, docs/bench.md), written from the format's description and not
from runlab's code or examples/planner.py: point motions are checked exactly (segment
against box by clipping), rigid-body motions at a tenth of the problem's resolution with a
polygon test (corner containment and edge crossings, no separating axes), car motions by
integrating the arcs and lines the planner says it drove.

usage: check_path.py PROBLEM.json CONSOLE_FILE
Reads every `runlab-path:` line (states "v,v,... v,v,...") and, for cars, the
`runlab-motions:` line after it ("WORD,t,p,q ..." segment lengths in turning radii).
Prints one line per path; exits 0 when at least one path was found and all hold."""
import json
import math
import sys

EPS = 1e-9


def segment_hits_box(a, b, lo, hi):
    """Whether the segment a-b meets the closed box, by Liang-Barsky clipping."""
    t0, t1 = 0.0, 1.0
    for i in range(len(a)):
        d = b[i] - a[i]
        if abs(d) < 1e-15:
            if a[i] < lo[i] or a[i] > hi[i]:
                return False
            continue
        u, v = (lo[i] - a[i]) / d, (hi[i] - a[i]) / d
        if u > v:
            u, v = v, u
        t0, t1 = max(t0, u), min(t1, v)
        if t0 > t1:
            return False
    return True


def corners(x, y, yaw, hx, hy):
    c, s = math.cos(yaw), math.sin(yaw)
    return [(x + c * u - s * v, y + s * u + c * v) for u, v in ((hx, hy), (-hx, hy), (-hx, -hy), (hx, -hy))]


def cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def inside_convex(p, poly):
    signs = [cross(poly[k], poly[(k + 1) % len(poly)], p) for k in range(len(poly))]
    return all(s >= -EPS for s in signs) or all(s <= EPS for s in signs)


def segments_cross(p1, p2, q1, q2):
    d1, d2 = cross(q1, q2, p1), cross(q1, q2, p2)
    d3, d4 = cross(p1, p2, q1), cross(p1, p2, q2)
    return d1 * d2 <= 0 and d3 * d4 <= 0 and (abs(d1) + abs(d2) > 0 or abs(d3) + abs(d4) > 0) and \
        min(p1[0], p2[0]) <= max(q1[0], q2[0]) + EPS and min(q1[0], q2[0]) <= max(p1[0], p2[0]) + EPS and \
        min(p1[1], p2[1]) <= max(q1[1], q2[1]) + EPS and min(q1[1], q2[1]) <= max(p1[1], p2[1]) + EPS


def polygons_meet(a, b):
    if any(inside_convex(p, b) for p in a) or any(inside_convex(p, a) for p in b):
        return True
    return any(segments_cross(a[i], a[(i + 1) % 4], b[j], b[(j + 1) % 4]) for i in range(4) for j in range(4))


class Checker:
    def __init__(self, doc):
        assert doc["format"] == "runlab-problem/1", doc["format"]
        self.doc = doc
        self.kind = doc["robot"]["kind"]
        self.wdim = doc["workspace"]["dimension"]
        self.low, self.high = doc["workspace"]["low"], doc["workspace"]["high"]
        self.boxes = [(o["min"], o["max"]) for o in doc["obstacles"]]
        assert all(o["shape"] == "box" for o in doc["obstacles"])
        self.half = [v / 2 for v in doc["robot"].get("size", [])]
        self.res = doc["resolution"]

    def body_free(self, q):
        """A rigid body or car at q: inside the bounds and touching no box."""
        yaw = q[self.wdim]
        poly = corners(q[0], q[1], yaw, self.half[0], self.half[1])
        if any(not (self.low[0] <= x <= self.high[0] and self.low[1] <= y <= self.high[1]) for x, y in poly):
            return False
        if self.wdim == 3 and not (self.low[2] <= q[2] - self.half[2] and q[2] + self.half[2] <= self.high[2]):
            return False
        for lo, hi in self.boxes:
            if self.wdim == 3 and (q[2] + self.half[2] < lo[2] or q[2] - self.half[2] > hi[2]):
                continue
            box = [(lo[0], lo[1]), (hi[0], lo[1]), (hi[0], hi[1]), (lo[0], hi[1])]
            if polygons_meet(poly, box):
                return False
        return True

    def rigid_motion(self, a, b):
        w = self.doc["distance"]["yaw_weight"]
        i = self.wdim
        dyaw = (b[i] - a[i] + math.pi) % (2 * math.pi) - math.pi
        d = math.sqrt(sum((b[k] - a[k]) ** 2 for k in range(i)) + (w * dyaw) ** 2)
        n = max(1, math.ceil(d / (self.res / 10)))
        for k in range(n + 1):
            t = k / n
            q = [a[j] + t * (b[j] - a[j]) for j in range(i)] + [a[i] + t * dyaw]
            if not self.body_free(q):
                return f"collision at {q}"
        return None

    def point_motion(self, a, b):
        for q in (a, b):
            if any(not self.low[k] <= q[k] <= self.high[k] for k in range(self.wdim)):
                return f"{q} out of bounds"
        for lo, hi in self.boxes:
            if segment_hits_box(a, b, lo, hi):
                return f"segment {a} - {b} meets box {lo} {hi}"
        return None

    def car_motion(self, a, b, word, seg):
        rho = self.doc["robot"]["turning_radius"]
        total = sum(seg) * rho
        n = max(1, math.ceil(total / (self.res / 10)))
        x, y, th = a
        step = total / n / rho  # in turning radii
        remaining = list(seg)
        for _ in range(n):
            left = step
            for k in range(3):
                if left <= 0:
                    break
                u = min(left, remaining[k])
                if u <= 0:
                    continue
                remaining[k] -= u
                left -= u
                # small exact steps along an arc of radius rho or a line
                if word[k] == "S":
                    x, y = x + u * rho * math.cos(th), y + u * rho * math.sin(th)
                else:
                    sgn = 1 if word[k] == "L" else -1
                    cx, cy = x - sgn * rho * math.sin(th), y + sgn * rho * math.cos(th)
                    th += sgn * u
                    x, y = cx + sgn * rho * math.sin(th), cy - sgn * rho * math.cos(th)
            if not self.body_free((x, y, th)):
                return f"collision at {(x, y, th)}"
        dyaw = (b[2] - th + math.pi) % (2 * math.pi) - math.pi
        if math.hypot(b[0] - x, b[1] - y) > 1e-6 or abs(dyaw) > 1e-6:
            return f"the motion {word} {seg} from {a} ends at {(x, y, th)}, not {b}"
        return None

    def check(self, path, motions):
        doc = self.doc
        if any(abs(u - v) > 1e-9 for u, v in zip(path[0], doc["start"])):
            return f"starts at {path[0]}, not at the start {doc['start']}"
        end, goal = path[-1], doc["goal"]
        gap = [e - g for e, g in zip(end, goal)]
        if len(gap) > self.wdim:
            gap[self.wdim] = (gap[self.wdim] + math.pi) % (2 * math.pi) - math.pi
        if self.kind == "car" and max(abs(v) for v in gap) > 1e-6:
            return f"ends at {end}, not at the goal {goal}"
        if self.kind != "car":
            w = [1.0] * self.wdim + [doc["distance"].get("yaw_weight", 0.0)]
            if math.sqrt(sum((w[k] * gap[k]) ** 2 for k in range(len(gap)))) > doc["goal_tolerance"] + 1e-12:
                return f"ends at {end}, beyond the goal tolerance of {goal}"
        if self.kind == "car" and len(motions) != len(path) - 1:
            return f"{len(path) - 1} motions but {len(motions)} curves"
        for k in range(1, len(path)):
            a, b = path[k - 1], path[k]
            if self.kind == "point":
                why = self.point_motion(a, b)
            elif self.kind == "rigid":
                why = self.rigid_motion(a, b)
            else:
                why = self.car_motion(a, b, motions[k - 1][0], motions[k - 1][1])
            if why:
                return f"motion {k}: {why}"
        return None


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        checker = Checker(json.load(f))
    paths = []
    with open(sys.argv[2], encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("runlab-path: "):
                paths.append(([tuple(float(v) for v in s.split(",")) for s in line.split()[1:]], []))
            elif line.startswith("runlab-motions: ") and paths:
                paths[-1][1].extend((m.split(",")[0], [float(v) for v in m.split(",")[1:]])
                                    for m in line.split()[1:])
    bad = 0
    for i, (path, motions) in enumerate(paths):
        why = checker.check(path, motions)
        print(f"path {i}: {len(path)} states: {why or 'collision-free'}")
        bad += why is not None
    if not paths:
        print("no runlab-path line")
    sys.exit(0 if paths and not bad else 1)


if __name__ == "__main__":
    main()
