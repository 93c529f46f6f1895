#!/usr/bin/env python3
"""Writes the ship-anchor lift (docs/models.md, "anchor_lift.json"; thesis section 7.5).

    /usr/bin/python3 scripts/gen_anchor_lift.py [-o models/anchor_lift.json] [--links N] [--lift T]

--links N: N common links instead of 57 (a shorter chain with the same end
fittings and anchor, for tests of the sensitivities; the shipped model is the
default).
--lift T: a lift of T seconds instead of 20, the shipped hoist law compressed
in time and distance by T/20 (knots every T/10 s, start time constant T/20 s):
the same hauling speeds at the same fractions of the lift, accelerations
20/T times larger; the simulation's tf is T (scripts/optimize_anchor.sh).

A 64-body chain: the top common link C01 on a floating joint whose translation
(the global position of its hoist point) follows the hoist law, 56 more
common links, an enlarged link, a swivel in two parts (revolute about the
chain axis), an enlarged link, an end link, the anchor shackle and a 570 kg
stockless anchor. 7 + 3 + 60 x 2 = 130 coordinates, as the thesis's model.

Figures (docs/models.md says where each comes from): chain of 24 mm
grade-1 stud-link cable and a 570 kg anchor (IACS Rec. 10, Table 1, EN
175-205); stud-link proportions (outside length 6 d, outside width 3.6 d,
pitch 4 d; enlarged links 1.1 d, end links 1.2 d) and the link mass
(10/3) d^3 lb with d in inches (1.28 kg). Swivel, shackle and anchor
shape are ours.

The hull is a plane inclined at 60 degrees to the horizontal, facing up and
out; the chain lies on it along the steepest line, and the hoist drags the
top link up that line by s(t), a clamped cubic spline through 11 knots
(every 2 s over 20 s) whose knot values are the design parameters s01..s10.
Each body carries a contact sphere (the anchor four), steel on steel:
Hertz stiffness, restitution 0.5 at 0.1 m/s, regularized Coulomb friction
mu = 0.3.
"""
import argparse
import json
import math

p = argparse.ArgumentParser()
p.add_argument("-o", "--out", default="models/anchor_lift.json")
p.add_argument("--links", type=int, default=57, help="common links (57: the shipped model)")
p.add_argument("--lift", type=float, default=20.0, help="duration of the lift in s (20: the shipped model)")
a = p.parse_args()
if a.links < 1:
    p.error("--links: at least one common link")
if not (a.lift > 0 and math.isfinite(a.lift)):
    p.error("--lift: a positive duration in seconds")

# ---------------------------------------------------------------- figures
d = 0.024                       # nominal diameter, grade 1, IACS Rec. 10 Table 1 (EN 175-205)
LB = 0.45359237
m_common = 10.0 / 3.0 * (d / 0.0254) ** 3 * LB   # (10/3) d^3 lb, d in inches
m_anchor = 570.0                # IACS Rec. 10 Table 1 (EN 175-205)
rho_steel = 7850.0
E_steel, nu_steel = 210e9, 0.3
g = 9.81
theta = math.radians(60.0)      # hull inclination to the horizontal (ours)
mu, v_slip = 0.3, 0.1           # steel on painted steel, wet (ours); slip speed of the regularization (docs/models.md)
e_rest, v_impact = 0.5, 0.1     # restitution at the reference impact speed (ours)
n_common = a.links


def r6(v):
    return float("%.6g" % v) + 0.0   # + 0.0: no "-0.0"


T_lift = a.lift                 # the lift's duration, s (20: thesis Table 7.29)
t_knots = [r6(T_lift / 10 * k) for k in range(11)]   # hoist-law knots, s
v_hoist, t_start = 0.15, T_lift / 20   # 9 m/min after a start of time constant 1 s in 20 (ours)


def ring(mass, length, width, wire):
    """Inertia about the centre of a link in the x-y plane (x along the chain): a thin
    elliptical ring through the wire centres, uniform in the parameter angle (<x^2> = a^2/2,
    <y^2> = b^2/2), a = (length - wire)/2, b = (width - wire)/2."""
    ax, by = (length - wire) / 2, (width - wire) / 2
    ixx, iyy = mass * by * by / 2, mass * ax * ax / 2
    return [ixx, iyy, ixx + iyy]


# bodies from the hoist down: (name, kind, mass, pitch, inertia in the x-y plane, or None)
links = []
for k in range(n_common):
    links.append(("C%02d" % (k + 1), "common", m_common, 4 * d, ring(m_common, 6 * d, 3.6 * d, d)))
m_el = m_common * 1.1 ** 3
links.append(("EL1", "enlarged", m_el, 4.4 * d, ring(m_el, 6.6 * d, 3.96 * d, 1.1 * d)))
# swivel (ours): body and eye bolt, 2.5 kg each, pitches 6 d and 4 d, solid cylinders of radius 1.5 d
for name, pitch in (("swivel_body", 6 * d), ("swivel_eye", 4 * d)):
    ms, rs = 2.5, 1.5 * d
    links.append((name, "swivel", ms, pitch, [ms * rs * rs / 2, ms * (3 * rs * rs + pitch ** 2) / 12,
                                              ms * (3 * rs * rs + pitch ** 2) / 12]))
links.append(("EL2", "enlarged", m_el, 4.4 * d, ring(m_el, 6.6 * d, 3.96 * d, 1.1 * d)))
m_end = m_common * 1.2 ** 2 * 6.75 / 6        # open link: wire 1.2 d, length 6.75 d (no stud)
links.append(("end_link", "end", m_end, 4.35 * d, ring(m_end, 6.75 * d, 4.0 * d, 1.2 * d)))
# anchor shackle (ours): 4 kg, pin to bow 5 d, a solid block 5 d x 3 d x 1.5 d
ms, ls, ws, ts = 4.0, 5 * d, 3 * d, 1.5 * d
links.append(("shackle", "shackle", ms, ls, [ms * (ws * ws + ts * ts) / 12, ms * (ls * ls + ts * ts) / 12,
                                               ms * (ls * ls + ws * ws) / 12]))
assert len(links) == n_common + 6

# anchor (ours, stockless): frame at the shackle pin, x along the shank (down), flukes in x-y.
# shank: 30 % of the mass, a rod from the pin to the crown at 1.0 m; head (crown and flukes): 70 %,
# a block 0.3 x 0.75 x 0.2 m centred at x = 0.85
L_sh, m_sh, m_hd, x_hd, bx, byy, bz = 1.0, 0.3 * m_anchor, 0.7 * m_anchor, 0.85, 0.3, 0.75, 0.2
xc = (m_sh * L_sh / 2 + m_hd * x_hd) / m_anchor
r_sh = 0.05
I_anchor = [m_sh * r_sh ** 2 / 2 + m_hd * (byy ** 2 + bz ** 2) / 12,
            m_sh * L_sh ** 2 / 12 + m_sh * (L_sh / 2 - xc) ** 2 + m_hd * (bx ** 2 + bz ** 2) / 12 + m_hd * (x_hd - xc) ** 2,
            m_sh * L_sh ** 2 / 12 + m_sh * (L_sh / 2 - xc) ** 2 + m_hd * (bx ** 2 + byy ** 2) / 12 + m_hd * (x_hd - xc) ** 2]

# ---------------------------------------------------------------- geometry
# the chain lies along the steepest line of the hull, down-slope direction dn, outward normal nh
dn = [math.cos(theta), 0.0, -math.sin(theta)]
nh = [math.sin(theta), 0.0, math.cos(theta)]
R_link = 1.8 * d                # contact sphere of a link: half its outside width, at its centre
R_anchor = 0.05
# rotation body -> global of every body at q0: x -> dn, y -> global y, z -> x cross y = nh
Rq = [[dn[0], 0.0, nh[0]], [dn[1], 1.0, nh[1]], [dn[2], 0.0, nh[2]]]


def quat(R):
    w = math.sqrt(max(0.0, 1 + R[0][0] + R[1][1] + R[2][2])) / 2
    return [w, (R[2][1] - R[1][2]) / (4 * w), (R[0][2] - R[2][0]) / (4 * w), (R[1][0] - R[0][1]) / (4 * w)]


p0 = quat(Rq)
# the hoist point (top bearing of C01) starts at the origin; the chain's centre line is R_link
# above the hull, so the hull plane passes through -R_link nh
plane_point = [-R_link * c for c in nh]

# ---------------------------------------------------------------- model
bodies, joints, forces = [], [], []
normals = []   # plane normal of each link (body axes): z and y alternate down the chain
for k, (name, kind, mass, pitch, I3) in enumerate(links):
    nz = k % 2 == 0
    normals.append([0, 0, 1] if nz else [0, 1, 0])
    Ixx, Iyy, Izz = I3
    if not nz and kind not in ("swivel",):
        Iyy, Izz = Izz, Iyy          # the link lies in the x-z plane
    bodies.append({"name": name, "mass": r6(mass), "com": [0, 0, 0],
                   "inertia": [Ixx, Iyy, Izz, 0, 0, 0],
                   "points": {"top": [r6(-pitch / 2), 0, 0], "bottom": [r6(pitch / 2), 0, 0]}})
bodies.append({"name": "anchor", "mass": m_anchor, "com": [r6(xc), 0, 0],
               "inertia": I_anchor + [0, 0, 0],
               "points": {"pin": [0, 0, 0], "shank": [0.1, 0, 0], "crown": [L_sh, 0, 0],
                          "fluke_left": [0.55, 0.3, 0], "fluke_right": [0.55, -0.3, 0]}})

joints.append({"name": "hoist", "type": "floating", "parent": "ground", "child": "C01",
               "parent_point": [0, 0, 0], "child_point": "top",
               "q0": [0, 0, 0] + p0})
names = [b["name"] for b in bodies]
for k in range(1, len(names)):
    par, chi = names[k - 1], names[k]
    j = {"name": "j_" + chi, "parent": par, "child": chi, "parent_point": "bottom", "child_point": "top"}
    if chi == "swivel_eye":
        j.update(type="revolute", axis=[1, 0, 0])                 # the swivel: about the chain axis
    elif chi == "shackle":
        j.update(type="revolute", axis=normals[k - 1])            # the end link in the shackle's bow
    elif chi == "anchor":
        j.update(type="revolute", axis=[0, 0, 1], child_point="pin")   # the shackle pin in the shank eye
    else:
        j.update(type="cardan", axis=normals[k - 1], ref=normals[k])   # the cross: parent plane, child plane
    joints.append(j)

K_hertz = lambda R: 4.0 / 3.0 * E_steel / (2 * (1 - nu_steel ** 2)) * math.sqrt(R)


def contact(name, body, point, R):
    return {"name": name, "type": "contact_plane", "body": body, "point": point, "shape": "sphere",
            "radius": r6(R), "plane_point": [r6(c) for c in plane_point], "plane_normal": [r6(c) for c in nh],
            "stiffness": r6(K_hertz(R)), "exponent": 1.5, "restitution": e_rest, "impact_velocity": v_impact,
            "smoothing": 1e-7, "friction": mu, "slip_speed": v_slip}


for b in bodies[:-1]:
    b["points"]["centre"] = [0, 0, 0]
    forces.append(contact("hull_" + b["name"], b["name"], "centre", R_link))
# the anchor's spheres touch the hull at q0: centres R_anchor above it, the shank line R_link above
z_off = r6(R_anchor - R_link)
for pt in ("shank", "crown", "fluke_left", "fluke_right"):
    bodies[-1]["points"][pt][2] = z_off
    forces.append(contact("hull_anchor_" + pt.split("_")[-1], "anchor", pt, R_anchor))


# hoist law: s(t) hauled up-slope; knots s_k = v (t_k - T (1 - exp(-t_k / T))), clamped
def s_of(t):
    return v_hoist * (t - t_start * (1 - math.exp(-t / t_start)))


s_k = [r6(s_of(t)) for t in t_knots]
up = [-c for c in dn]
functions = [
    {"name": "hoist_x", "type": "spline", "ends": "clamped", "times": t_knots, "values": [r6(up[0] * s) for s in s_k]},
    {"name": "hoist_z", "type": "spline", "ends": "clamped", "times": t_knots, "values": [r6(up[2] * s) for s in s_k]},
]
constraints = [
    {"name": "hoist_x", "type": "coordinate", "joint": "hoist", "coordinate": "x", "function": "hoist_x"},
    {"name": "hoist_y", "type": "coordinate", "joint": "hoist", "coordinate": "y", "value": 0},
    {"name": "hoist_z", "type": "coordinate", "joint": "hoist", "coordinate": "z", "function": "hoist_z"},
]
parameters = []
for k in range(1, len(t_knots)):
    parameters.append({"name": "s%02d" % k, "value": s_k[k], "lower": 0, "upper": 6,
                       "sets": [{"target": "hoist_x.values[%d]" % k, "scale": r6(up[0])},
                                {"target": "hoist_z.values[%d]" % k, "scale": r6(up[2])}]})
parameters.append({"name": "m_link", "value": r6(m_common), "lower": 0.5, "upper": 3,
                   "sets": ["C%02d.mass" % (k + 1) for k in range(n_common)]})
# K_hull in units of 1e10 N/m^1.5, so that every design parameter is of order one (the optimizer's
# steps and bounds; the gradients do not depend on the units: docs/sensitivity.md, "Parameters")
K_unit = 1e10
parameters.append({"name": "K_hull", "value": r6(K_hertz(R_link) / K_unit), "lower": 1e8 / K_unit,
                   "upper": 1e11 / K_unit,
                   "sets": [{"target": "hull_%s.stiffness" % b["name"], "scale": K_unit} for b in bodies[:-1]]})
parameters.append({"name": "mu_hull", "value": mu, "lower": 0, "upper": 1,
                   "sets": [f["name"] + ".friction" for f in forces]})

# the hoist force: the generalized force of the floating joint's translation (the global position
# of the hoist point), i.e. the force the three hoist drivers apply (docs/sensitivity.md)
hoist_force = {"coordinate": ["hoist.x", "hoist.y", "hoist.z"], "quantity": "force"}
F_ref = 1e4                     # N: the scale of the peak surrogate (the chain and anchor weigh 6.4 kN)
p_peak = 8                      # the exponent of the peak surrogate
objectives = [
    # integral of the squared hoist force, in kN^2 s
    {"name": "hoist_force2", "integral": [dict(hoist_force, weight=1e-6)]},
    # peak surrogate: int (|F| / F_ref)^p dt; the p-norm F_ref (psi / T)^(1/p) tends to max |F| as p grows
    {"name": "hoist_peak", "integral": [dict(hoist_force, power=p_peak, weight=F_ref ** -p_peak)]},
]

model = {
    "name": "anchor_lift",
    "description": ("Ship-anchor lift after thesis section 7.5 (docs/models.md, anchor_lift.json): 64 bodies, "
                    "130 coordinates; written by scripts/gen_anchor_lift.py." if n_common == 57 and T_lift == 20 else
                    "A shorter anchor lift (docs/models.md, anchor_lift.json): %d common links, a %g s lift; "
                    "written by scripts/gen_anchor_lift.py --links %d --lift %g."
                    % (n_common, T_lift, n_common, T_lift)),
    "gravity": [0, 0, -g],
    "bodies": bodies,
    "joints": joints,
    "functions": functions,
    "forces": forces,
    "constraints": constraints,
    # index-1 runs the trapezoidal rule's fixed point; ali3p (--formulation ali3p) needs
    # beta h^2 alpha (625 kg) of the order of the mass the hoist drivers carry (657 kg), or its
    # multiplier updates converge too slowly (docs/models.md)
    "simulation": {"integrator": "trapezoidal", "formulation": "index1", "penalty": 1e12,
                   "dt": 5e-05, "tf": r6(T_lift) if T_lift != 20 else 20, "ref": "com"},
    "outputs": [{"point": "C01.top"}, {"point": "anchor.crown"}, "energy", hoist_force],
    "parameters": parameters,
    "objectives": objectives,
}


def dump(v, ind=0):
    """JSON with one member per line and numeric arrays on one line (diffs well)."""
    sp = "  " * ind
    if isinstance(v, dict):
        items = [sp + "  " + json.dumps(k) + ": " + dump(x, ind + 1).lstrip() for k, x in v.items()]
        return sp + "{\n" + ",\n".join(items) + "\n" + sp + "}"
    if isinstance(v, list):
        if all(isinstance(x, (int, float)) for x in v):
            return sp + json.dumps(v)
        if all(isinstance(x, str) for x in v) and len(v) <= 4:
            return sp + json.dumps(v)
        return sp + "[\n" + ",\n".join(dump(x, ind + 1) for x in v) + "\n" + sp + "]"
    return sp + json.dumps(v)


with open(a.out, "w") as f:
    f.write(dump(model) + "\n")
