#!/usr/bin/env python3
# Writes models/halfcar_step.json (docs/models.md, "halfcar_step"): run from the repository root.
import json, math
g=9.81
ms, Iyy = 200.0, 200.0
a, b = 1.1, 1.3        # CoM to front / rear axle
L = a+b
mf, mr = 25.0, 30.0
kt, ct = 60430.0, 100.0
h = 0.01               # step descent (m)
V = 3.0                # speed (m/s)
t_front = 0.2
t_rear = t_front + L/V
Ff = ms*g*b/L; Fr = ms*g*a/L
R = 0.3; zc = 0.6
l0f = R + (Ff+mf*g)/kt
l0r = R + (Fr+mr*g)/kt
kf, cf, kr, cr = 16000.0, 10000.0, 10595.0, 6000.0
w_travel = 1.0e4
model = {
 "name": "halfcar_step",
 "description": ("Suspension design substitute for the thesis buggy (section 7.3.4; its data are not public): a pitch-plane "
   "half vehicle (one side) driving at %g m/s over a %g cm step descent. Chassis (sprung mass %g kg, pitch inertia %g kg m^2, "
   "CoM %g m behind the front axle, wheelbase %g m) on a planar joint from the ground (vertical s1, longitudinal s2 held by a "
   "stiff joint spring, pitch theta); two wheels (unsprung %g and %g kg) on prismatic joints along the chassis z axis; "
   "suspension spring-dampers chassis top mount - wheel centre (thesis Table 7.14 values as the start); tires as linear "
   "spring-dampers wheel centre - ground (K = %g N/m, D_c = %g N s/m, thesis Table 7.15). The static load of each suspension is "
   "carried by a constant preload (a pair of opposite body loads), so the initial state is the static equilibrium for every "
   "stiffness and damping. The road drops by %g m under the front wheel at t = %g s and under the rear wheel at %g s = %g + L/V: "
   "a body load -K h s(t) on each wheel (s a quintic step over 20 ms), which for the linear tire spring is exactly a drop "
   "of its ground point by h.") % (V, h*100, ms, Iyy, a, L, mf, mr, kt, ct, h, t_front, t_rear, t_front),
 "gravity": [0, 0, -g],
 "bodies": [
  {"name": "chassis", "mass": ms, "com": [0,0,0], "inertia": [100.0, Iyy, 250.0, 0, 0, 0],
   "points": {"seat": [-0.2, 0, 0.3], "mount_f": [a, 0, 0.1], "mount_r": [-b, 0, 0.1],
              "hub_f": [a, 0, R-zc], "hub_r": [-b, 0, R-zc]}},
  {"name": "wheel_f", "mass": mf, "com": [0,0,0], "inertia": [0.8, 1.2, 0.8, 0, 0, 0], "points": {"centre": [0,0,0]}},
  {"name": "wheel_r", "mass": mr, "com": [0,0,0], "inertia": [0.9, 1.4, 0.9, 0, 0, 0], "points": {"centre": [0,0,0]}}
 ],
 "joints": [
  {"name": "body", "type": "planar", "parent": "ground", "child": "chassis", "parent_point": [0, 0, zc],
   "axis": [0, 1, 0]},
  {"name": "susp_f", "type": "prismatic", "parent": "chassis", "child": "wheel_f", "parent_point": "hub_f",
   "child_point": "centre", "axis": [0, 0, 1]},
  {"name": "susp_r", "type": "prismatic", "parent": "chassis", "child": "wheel_r", "parent_point": "hub_r",
   "child_point": "centre", "axis": [0, 0, 1]}
 ],
 "functions": [
  {"name": "road_f", "type": "step", "shape": "quintic", "t0": t_front, "v0": 0, "t1": t_front+0.02, "v1": 1},
  {"name": "road_r", "type": "step", "shape": "quintic", "t0": t_rear, "v0": 0, "t1": t_rear+0.02, "v1": 1}
 ],
 "forces": [
  {"name": "spring_f", "type": "spring_damper", "point1": "chassis.mount_f", "point2": "wheel_f.centre",
   "stiffness": kf, "damping": cf, "length": 0.4},
  {"name": "spring_r", "type": "spring_damper", "point1": "chassis.mount_r", "point2": "wheel_r.centre",
   "stiffness": kr, "damping": cr, "length": 0.4},
  {"name": "preload_f_chassis", "type": "body_load", "body": "chassis", "point": "mount_f", "force": [0, 0, Ff]},
  {"name": "preload_f_wheel", "type": "body_load", "body": "wheel_f", "force": [0, 0, -Ff]},
  {"name": "preload_r_chassis", "type": "body_load", "body": "chassis", "point": "mount_r", "force": [0, 0, Fr]},
  {"name": "preload_r_wheel", "type": "body_load", "body": "wheel_r", "force": [0, 0, -Fr]},
  {"name": "tire_f", "type": "spring_damper", "point1": "wheel_f.centre", "body2": "ground", "point2": [a, 0, 0],
   "stiffness": kt, "damping": ct, "length": l0f},
  {"name": "tire_r", "type": "spring_damper", "point1": "wheel_r.centre", "body2": "ground", "point2": [-b, 0, 0],
   "stiffness": kt, "damping": ct, "length": l0r},
  {"name": "road_step_f", "type": "body_load", "body": "wheel_f", "force": [0, 0, -kt*h], "function": "road_f"},
  {"name": "road_step_r", "type": "body_load", "body": "wheel_r", "force": [0, 0, -kt*h], "function": "road_r"},
  {"name": "longitudinal", "type": "joint_spring", "joint": "body", "coordinate": "s2", "stiffness": 2.0e5, "damping": 1.0e4}
 ],
 "simulation": {"integrator": "trapezoidal", "formulation": "semi", "dt": 0.001, "tf": 3.0},
 "parameters": [
  {"name": "k_f", "value": kf, "lower": 10, "upper": 1e5, "sets": ["spring_f.stiffness"]},
  {"name": "c_f", "value": cf, "lower": 10, "upper": 1e5, "sets": ["spring_f.damping"]},
  {"name": "k_r", "value": kr, "lower": 10, "upper": 1e5, "sets": ["spring_r.stiffness"]},
  {"name": "c_r", "value": cr, "lower": 10, "upper": 1e5, "sets": ["spring_r.damping"]}
 ],
 "objectives": [
  {"name": "ride", "integral": [
     {"point": "chassis.seat", "quantity": "acceleration", "component": "z"},
     {"coordinate": "susp_f", "weight": w_travel},
     {"coordinate": "susp_r", "weight": w_travel}]},
  {"name": "comfort", "integral": [{"point": "chassis.seat", "quantity": "acceleration", "component": "z"}]},
  {"name": "travel", "integral": [{"coordinate": "susp_f"}, {"coordinate": "susp_r"}]}
 ]
}
json.dump(model, open(__import__('sys').argv[1] if len(__import__('sys').argv) > 1 else 'models/halfcar_step.json','w'), indent=1)
