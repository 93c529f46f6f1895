#!/usr/bin/env python3
"""Writes the benchmark bicycle with tire forces (docs/models.md, "bicycle").

    python3 scripts/gen_bicycle.py [--knots N] [--tf T] [--rear TORQUE] [--steer TORQUE]
                                   [--no-objective | --single-objective] [-o models/bicycle.json]

Body data: Meijaard, Papadopoulos, Ruina & Schwab (2007), the benchmark
bicycle (as copied in ../shared/research/thesis_ch7_8.md, section 5.1),
converted from the benchmark frame (x forward, y right, z down, origin at
the rear contact point) to ours (x forward, y left, z up): positions
(x, y, z) -> (x, -y, -z), inertia products I_xz -> -I_xz.

Rolling constraints replaced by tire elements (thesis section 7.4): tire
friction data from thesis Table 7.24 (kappa_c = alpha_c = 0.15,
mu_x = mu_y = 1, radii 0.30 and 0.35 m). The normal stiffness is 10 times
Table 7.24's K (see docs/models.md for why) and the hysteresis is ours.

The frame moves on a chain of joints (yaw-height-lean-pitch) instead of a
floating joint, so that the lean angle is a coordinate the objective can
track: ground -planar(x, y, yaw)- base -prismatic(z)- sled -revolute(x: lean)-
roll -revolute(y: pitch, at the rear hub)- frame. base, sled and roll are
massless.

Controls: a drive torque on the rear wheel and a steering torque, each a
natural cubic spline through N knots equally spaced on [0, tf], whose knot
values are the design parameters (rear_k, steer_k). Every knot starts at the
constant given by --rear / --steer.
"""
import argparse
import json
import math

p = argparse.ArgumentParser()
p.add_argument("--knots", type=int, default=16, help="knots per spline (default 16)")
p.add_argument("--tf", type=float, default=10.0)
p.add_argument("--dt", type=float, default=0.002)
p.add_argument("--rear", type=float, default=2.0, help="initial constant rear-wheel torque (N m)")
p.add_argument("--steer", type=float, default=0.0, help="initial constant steering torque (N m)")
p.add_argument("--speed", type=float, default=5.0, help="initial forward speed (m/s)")
p.add_argument("--no-objective", action="store_true")
p.add_argument("--single-objective", action="store_true", help="only the objective 'track'")
p.add_argument("-o", "--out", default="models/bicycle.json")
a = p.parse_args()

g = 9.81
# ---- Meijaard et al. 2007 (benchmark frame converted to z up, y left) ----
w, c, lam = 1.02, 0.08, math.pi / 10       # wheelbase, trail, steer-axis tilt
Rr, mr, Ir_xx, Ir_yy = 0.3, 2.0, 0.0603, 0.12
Rf, mf, If_xx, If_yy = 0.35, 3.0, 0.1405, 0.28
mB, xB, zB = 85.0, 0.3, 0.9
IB = [9.2, 11.0, 2.8, 0.0, -2.4, 0.0]        # xx yy zz xy xz yz (I_xz sign flipped)
mH, xH, zH = 4.0, 0.9, 0.7
IH = [0.05892, 0.06, 0.00708, 0.0, 0.00756, 0.0]
# ---- tires (thesis Table 7.24, K x 10, hysteresis ours) ----
K, chi, kc, ac, mu = 6.0e4, 1.0, 0.15, 0.15, 1.0

# static equilibrium (upright, at rest): the tire loads from the moments about the rear contact,
# with the frame pitched about the rear hub by theta (rotation about +y, positive = nose down);
# the rear hub drops by the rear deflection dr, the front hub by the front deflection df
W = (mB + mH + mr + mf) * g
theta = 0.0
for it in range(20):
    c_, s_ = math.cos(theta), math.sin(theta)
    def rot(x, z):   # position relative to the rear hub after the pitch
        return x * c_ + (z - Rr) * s_, -x * s_ + (z - Rr) * c_
    xb, _ = rot(xB, zB)
    xh, _ = rot(xH, zH)
    xf, zf = rot(w, Rf)
    Ff = (mB * xb + mH * xh + mf * xf) * g / xf
    Fr = W - Ff
    dr, df = Fr / K, Ff / K
    # front hub height above the ground: (Rr - dr) + zf = Rf - df
    theta = math.asin(((Rf - df) - (Rr - dr)) / math.hypot(w, Rf - Rr)) - math.atan2(Rf - Rr, w)
    theta = -theta   # nose up when the front hub is relatively higher

# steer axis: through the ground point (w + c, 0, 0), direction up and back
s_ax = [-math.sin(lam), 0.0, math.cos(lam)]
S = [w + c - Rf * math.tan(lam), 0.0, Rf]    # point on the axis at front-hub height (global, upright)

# body frames (upright, undeflected): frame at the rear hub, fork at the front hub, axes global
hub_r = [0.0, 0.0, Rr]
hub_f = [w, 0.0, Rf]
def sub(p, q): return [p[0] - q[0], p[1] - q[1], p[2] - q[2]]

v0 = a.speed
model = {
    "name": "bicycle",
    "description": (
        "Benchmark bicycle of Meijaard et al. (2007) with tire forces instead of rolling constraints, as in the "
        "thesis (section 7.4): rear frame with rider, fork and handlebar, two wheels. Body data from Meijaard et "
        "al. converted to x forward, y left, z up. Tires: circle-plane contact with a linearized slip friction "
        "model (thesis Table 7.24; normal stiffness 6e4 N/m = 10 x the table's, hysteresis 1 s/m: see "
        "docs/models.md). The frame moves on yaw (planar), height (prismatic), lean (revolute about the heading, "
        "positive = lean right) and pitch (revolute at the rear hub) joints, so the lean is a coordinate. "
        "Controls: rear-wheel drive torque and steering torque, cubic splines through %d knots each on [0, %g] s "
        "(the knot values are the parameters). A safety sphere (radius 1 m, centre 3 m above the ground when "
        "upright) catches the frame beyond about 70 degrees of lean. Written by scripts/gen_bicycle.py."
        % (a.knots, a.tf)),
    "gravity": [0, 0, -g],
    "bodies": [
        {"name": "base", "mass": 0},
        {"name": "sled", "mass": 0},
        {"name": "roll", "mass": 0},
        {"name": "frame", "mass": mB, "com": sub([xB, 0, zB], hub_r), "inertia": IB,
         "points": {"hub": [0, 0, 0], "steer": sub(S, hub_r), "top": [xB, 0, 3.0 - Rr]}},
        {"name": "fork", "mass": mH, "com": sub([xH, 0, zH], hub_f), "inertia": IH,
         "points": {"hub": [0, 0, 0], "steer": sub(S, hub_f)}},
        {"name": "rear_wheel", "mass": mr, "inertia": [Ir_xx, Ir_yy, Ir_xx, 0, 0, 0], "points": {"centre": [0, 0, 0]}},
        {"name": "front_wheel", "mass": mf, "inertia": [If_xx, If_yy, If_xx, 0, 0, 0],
         "points": {"centre": [0, 0, 0]}},
    ],
    "joints": [
        {"name": "plane", "type": "planar", "parent": "ground", "child": "base", "axis": [0, 0, 1],
         "qd0": [v0, 0, 0]},
        {"name": "height", "type": "prismatic", "parent": "base", "child": "sled", "axis": [0, 0, 1],
         "q0": [-dr]},
        {"name": "lean", "type": "revolute", "parent": "sled", "child": "roll", "axis": [1, 0, 0]},
        {"name": "pitch", "type": "revolute", "parent": "roll", "child": "frame", "parent_point": hub_r,
         "child_point": "hub", "axis": [0, 1, 0], "q0": [theta]},
        {"name": "steer", "type": "revolute", "parent": "frame", "child": "fork", "parent_point": "steer",
         "child_point": "steer", "axis": s_ax},
        {"name": "rear", "type": "revolute", "parent": "frame", "child": "rear_wheel", "parent_point": "hub",
         "child_point": "centre", "axis": [0, 1, 0], "qd0": [v0 / Rr]},
        {"name": "front", "type": "revolute", "parent": "fork", "child": "front_wheel", "parent_point": "hub",
         "child_point": "centre", "axis": [0, 1, 0], "qd0": [v0 / Rf]},
    ],
}

T = a.tf
n = a.knots
times = [T * k / (n - 1) for k in range(n)]
model["functions"] = [
    {"name": "rear_torque", "type": "spline", "times": times, "values": [a.rear] * n},
    {"name": "steer_torque", "type": "spline", "times": times, "values": [a.steer] * n},
]
tire = {"stiffness": K, "hysteresis": chi, "kappa_c": kc, "alpha_c": ac, "mu_x": mu, "mu_y": mu,
        "speed_regularization": 0.1, "smoothing": 1e-4}
model["forces"] = [
    dict({"name": "rear_tire", "type": "tire", "body": "rear_wheel", "point": "centre", "axis": [0, 1, 0],
          "radius": Rr}, **tire),
    dict({"name": "front_tire", "type": "tire", "body": "front_wheel", "point": "centre", "axis": [0, 1, 0],
          "radius": Rf}, **tire),
    {"name": "safety", "type": "contact_plane", "body": "frame", "point": "top", "shape": "sphere", "radius": 1.0,
     "stiffness": 2.0e4, "hysteresis": 1.0},
    {"name": "drive", "type": "joint_force", "joint": "rear", "function": "rear_torque"},
    {"name": "steering", "type": "joint_force", "joint": "steer", "function": "steer_torque"},
]
model["simulation"] = {"integrator": "trapezoidal", "formulation": "semi", "dt": a.dt, "tf": T}
model["outputs"] = [{"point": "frame.hub", "quantities": ["position", "velocity"]}]
params = []
for k in range(n):
    params.append({"name": "rear_%d" % k, "value": a.rear, "lower": -10, "upper": 200,
                   "sets": ["rear_torque.values[%d]" % k]})
for k in range(n):
    params.append({"name": "steer_%d" % k, "value": a.steer, "lower": -50, "upper": 50,
                   "sets": ["steer_torque.values[%d]" % k]})
model["parameters"] = params
if not a.no_objective:
    # references: a left turn (negative lean) between 2 and 8 s, speed 5 -> 6 m/s between 1 and 4 s
    rt = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    lean = [0, 0, 0, -0.05, -0.13, -0.17, -0.17, -0.13, -0.05, 0, 0]
    speed = [5, 5, 5.2, 5.6, 5.9, 6, 6, 6, 6, 6, 6]
    scale = T / 10.0
    model["functions"] += [
        {"name": "lean_ref", "type": "spline", "ends": "clamped", "times": [t * scale for t in rt], "values": lean},
        {"name": "spin_ref", "type": "spline", "ends": "clamped", "times": [t * scale for t in rt],
         "values": [v / Rr for v in speed]},
    ]
    model["objectives"] = [
        {"name": "track", "integral": [
            {"coordinate": "lean", "reference": "lean_ref", "weight": 10.0},
            {"coordinate": "rear", "quantity": "velocity", "reference": "spin_ref", "weight": Rr * Rr}]},
        {"name": "lean_error", "integral": [{"coordinate": "lean", "reference": "lean_ref"}]},
        {"name": "speed_error", "integral": [
            {"coordinate": "rear", "quantity": "velocity", "reference": "spin_ref", "weight": Rr * Rr}]},
    ]
    if a.single_objective:
        model["objectives"] = model["objectives"][:1]
with open(a.out, "w") as f:
    json.dump(model, f, indent=1)
    f.write("\n")
