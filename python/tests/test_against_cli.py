"""The calls over whole simulations, the model information and the check equal
the command-line tool's output bit for bit (its JSON and CSV print 17 or the
fewest round-tripping significant digits, which read back exactly):
info, kinematics, inverse, simulate (every integrator, closed-loop
formulations), sensitivity (every method on an open tree and on the five-bar),
optimize and check."""
import csv
import io
import json

import numpy as np
import pytest

import mbsens
from conftest import SRC, model_id, run_cli, run_cli_json, shipped_models

M = SRC / "models"
T = SRC / "tests" / "models"


@pytest.mark.parametrize("path", shipped_models(), ids=model_id)
def test_info(path):
    m = mbsens.Model.load(path)
    info = run_cli_json("info", path, "--json")
    assert info["model"] == m.name
    assert (info["n_bodies"], info["n_coordinates"], info["n_dof"], info["n_constraints"], info["n_points"],
            info["n_vectors"], info["n_parameters"]) == (m.nbodies, m.nq, m.ndof, m.nconstraints, m.npoints,
                                                         m.nvectors, m.nparams)
    assert info["gravity"] == m.gravity.tolist()
    assert [b["name"] for b in info["bodies"]] == list(m.body_names[1:])
    assert [b["mass"] for b in info["bodies"]] == m.body_masses[1:].tolist()
    assert [b["parent"] for b in info["bodies"]] == [m.body_names[p] for p in m.body_parents[1:]]
    assert [j["name"] for j in info["joints"]] == list(m.joint_names)
    assert [j["type"] for j in info["joints"]] == list(m.joint_types)
    assert info["coordinates"] == list(m.coord_names)
    assert info["q0"] == m.q0.tolist() and info["qd0"] == m.qd0.tolist()
    assert [p["name"] for p in info["points"]] == list(m.point_names)
    assert [p["body"] for p in info["points"]] == [m.body_names[b] for b in m.point_bodies]
    assert info["parameters"] == list(m.param_names)
    for p, v, lo, hi in zip(info["parameter_details"], m.param_values, m.param_lower, m.param_upper):
        # infinite bounds print as null
        assert (p["value"], p["lower"], p["upper"]) == tuple(x if np.isfinite(x) else None for x in (v, lo, hi))
    assert [c["name"] for c in info.get("cut_joints", [])] == list(m.cut_names)
    assert [f["name"] for f in info["forces"]] == list(m.force_names)
    assert [f["type"] for f in info["forces"]] == list(m.force_types)


@pytest.mark.parametrize("path", shipped_models(), ids=model_id)
@pytest.mark.parametrize("ref", ["com", "origin", "joint"])
def test_kinematics_and_inverse(path, ref):
    m = mbsens.Model.load(path)
    rng = np.random.default_rng(3)
    q, qd = mbsens.normalize_state(m, m.q0 + 0.2 * rng.standard_normal(m.nq), rng.standard_normal(m.nv))
    qdd = rng.standard_normal(m.nv)
    lists = [",".join(repr(float(x)) for x in v) for v in (q, qd, qdd)]
    args = ["--q", lists[0], "--qd", lists[1], "--qdd", lists[2], "--ref", ref, "--json"]
    kin = run_cli_json("kinematics", path, *args)
    d = mbsens.Data(m)
    d.ref = ref
    mbsens.kinematics(m, d, q, qd, qdd)
    for b, jb in enumerate(kin["bodies"], start=1):
        A, o = d.body_pose(b)
        v, w = d.body_velocity(b)
        a, al = d.body_acceleration(b)
        assert jb["name"] == m.body_names[b]
        assert (jb["A"], jb["origin"], jb["r_com"]) == (A.tolist(), o.tolist(), d.body_com(b).tolist())
        assert (jb["v_com"], jb["omega"], jb["a_com"], jb["alpha"]) == (v.tolist(), w.tolist(), a.tolist(),
                                                                        al.tolist())
    for k, jp in enumerate(kin["points"]):
        r, v, a = d.point(k)
        assert (jp["name"], jp["r"], jp["v"], jp["a"]) == (m.point_names[k], r.tolist(), v.tolist(), a.tolist())
    inv = run_cli_json("inverse", path, *args)
    assert inv["tau"] == mbsens.inverse_dynamics(m, mbsens.Data(m) if ref == "com" else d, q, qd, qdd).tolist()


def read_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]])


SIMULATIONS = [
    (M / "double_pendulum.json", ["--tf", "0.5"], {"tf": 0.5}),
    (M / "double_pendulum.json", ["--tf", "0.5", "--integrator", "rk4", "--ref", "origin"],
     {"tf": 0.5, "integrator": "rk4", "ref": "origin"}),
    (M / "double_pendulum.json", ["--tf", "0.5", "--integrator", "cvodes", "--dt", "0.01"],
     {"tf": 0.5, "integrator": "cvodes", "dt": 0.01}),
    (M / "double_pendulum.json", ["--tf", "0.2", "--solver", "fixedpoint", "--formulation", "semi"],
     {"tf": 0.2, "solver": "fixedpoint", "formulation": "semi"}),
    (T / "spring_tree.json", ["--tf", "0.3", "--tangent", "fd", "--tangent-update", "step"],
     {"tf": 0.3, "tangent": "fd", "tangent_update": "step"}),
    (M / "fivebar.json", ["--formulation", "ali3p", "--tf", "0.3"], {"formulation": "ali3p", "tf": 0.3}),
    (M / "fivebar.json", ["--formulation", "matrixr", "--tf", "0.3"], {"formulation": "matrixr", "tf": 0.3}),
    (M / "slider_crank.json", ["--formulation", "index1", "--integrator", "rk4", "--tf", "0.2"],
     {"formulation": "index1", "integrator": "rk4", "tf": 0.2}),
    (M / "slider_crank.json", ["--formulation", "penalty", "--tf", "0.2", "--penalty", "1e8"],
     {"formulation": "penalty", "tf": 0.2, "penalty": 1e8}),
]


@pytest.mark.parametrize("path,args,opts", SIMULATIONS, ids=lambda x: x.name if hasattr(x, "name") else None)
def test_simulate(path, args, opts):
    header, rows = read_csv(run_cli("simulate", path, "-q", *args))
    m = mbsens.Model.load(path)
    r = mbsens.simulate(m, **opts)
    cols = ["t"] + list(m.coord_names) + [c + ".qd" for c in m.velocity_names] + \
        [c + ".qdd" for c in m.velocity_names] + list(m.output_names)
    py = np.column_stack([r.t, r.q, r.qd, r.qdd, r.outputs])
    if r.violation is not None:
        cols += ["phi_norm", "phid_norm", "phidd_norm"]
        py = np.column_stack([py, r.violation])
    assert header == cols
    assert py.shape == rows.shape
    assert np.array_equal(py, rows), f"max difference {np.max(np.abs(py - rows))}"
    assert r.stats.steps == len(r.t) - 1 or opts.get("integrator") == "cvodes"


def test_simulate_poses():
    """Pose outputs (7 columns a body, the widest kind) as simulate --poses
    writes them: the model's 'outputs' given "poses" from Python."""
    path = M / "bicycle.json"
    header, rows = read_csv(run_cli("simulate", path, "-q", "--tf", "0.05", "--poses", "all"))
    doc = json.loads(path.read_text())
    doc["outputs"] = doc.get("outputs", []) + ["poses"]
    m = mbsens.Model.from_string(json.dumps(doc), name="bicycle_poses.json")
    r = mbsens.simulate(m, tf=0.05)
    assert header == ["t"] + list(m.coord_names) + [c + ".qd" for c in m.velocity_names] + \
        [c + ".qdd" for c in m.velocity_names] + list(m.output_names)
    assert sum(n.endswith(".qw") for n in m.output_names) == m.nbodies
    assert np.array_equal(np.column_stack([r.t, r.q, r.qd, r.qdd, r.outputs]), rows)


SENSITIVITIES = [
    (T / "spring_tree.json", ["--tf", "0.2", "--method", m], {"tf": 0.2, "method": m})
    for m in ("ddm", "davm", "cavm", "fd")
] + [
    (T / "spring_tree.json", ["--tf", "0.1", "--method", "cs", "--formulation", "fr"],
     {"tf": 0.1, "method": "cs", "formulation": "fr"}),
    (T / "spring_tree.json", ["--tf", "0.1", "--method", "ddm", "--formulation", "fr", "--ref", "joint"],
     {"tf": 0.1, "method": "ddm", "formulation": "fr", "ref": "joint"}),
    (M / "fivebar.json", ["--formulation", "ali3p", "--tf", "0.5"], {"formulation": "ali3p", "tf": 0.5}),
    (M / "fivebar.json", ["--formulation", "matrixr", "--method", "davm", "--tf", "0.5", "--ref", "origin"],
     {"formulation": "matrixr", "method": "davm", "tf": 0.5, "ref": "origin"}),
    (M / "fivebar.json", ["--formulation", "ali3p", "--method", "cavm", "--tf", "0.3"],
     {"formulation": "ali3p", "method": "cavm", "tf": 0.3}),
]


@pytest.mark.parametrize("path,args,opts", SENSITIVITIES, ids=lambda x: x.name if hasattr(x, "name") else None)
def test_sensitivity(path, args, opts):
    ref = run_cli_json("sensitivity", path, "--json", *args)
    m = mbsens.Model.load(path)
    s = mbsens.sensitivity(m, **opts)
    assert list(s.objective_names) == ref["objectives"] and list(s.param_names) == ref["parameters"]
    assert (s.method, s.formulation, s.options["ref"]) == (ref["method"], ref["formulation"], ref["ref"])
    assert (s.options["dt"], s.options["tf"]) == (ref["dt"], ref["tf"])
    assert s.psi.tolist() == ref["psi"]
    assert s.gradient.tolist() == ref["gradient"]


def test_optimize(tmp_path):
    out = tmp_path / "opt.json"
    run_cli("optimize", M / "halfcar_step.json", "--max-iter", "2", "--tf", "1.2", "--out", out, "-q")
    ref = json.loads(out.read_text())
    m = mbsens.Model.load(M / "halfcar_step.json")
    r = mbsens.optimize(m, max_iter=2, tf=1.2)
    assert (r.method, r.options["formulation"], r.stop_reason) == (ref["method"], ref["formulation"],
                                                                    ref["stop_reason"])
    assert (r.psi_initial, r.psi_final, r.iterations, r.evaluations) == (ref["psi_initial"], ref["psi_final"],
                                                                         ref["iterations"], ref["evaluations"])
    assert r.x.tolist() == [ref["parameters"][p] for p in m.param_names]
    assert r.grad.tolist() == [ref["gradient"][p] for p in m.param_names]
    assert r.pg_norm == ref["projected_gradient_norm"]
    assert r.model.param_values.tolist() == r.x.tolist()


def test_optimize_options(tmp_path):
    """Fixed parameters, the algorithm, the method and the scaling as on the command line."""
    out = tmp_path / "opt.json"
    run_cli("optimize", M / "halfcar_step.json", "--max-iter", "2", "--fix", "k_f,c_r", "--algorithm", "mma",
            "--method", "ddm", "--scaling", "bounds", "--tf", "0.6", "--out", out, "-q")
    ref = json.loads(out.read_text())
    m = mbsens.Model.load(M / "halfcar_step.json")
    r = mbsens.optimize(m, max_iter=2, fixed=["k_f", "c_r"], algorithm="mma", method="ddm", scaling="bounds",
                        tf=0.6)
    assert r.x.tolist() == [ref["parameters"][p] for p in m.param_names]
    assert r.psi_final == ref["psi_final"]
    r2 = mbsens.optimize(m, max_iter=2, free=["c_f", "k_r"], algorithm="mma", method="ddm", scaling="bounds",
                         tf=0.6)
    assert r2.x.tolist() == r.x.tolist()


@pytest.mark.parametrize("path", [M / "double_pendulum.json", T / "spring_tree.json", M / "fivebar.json"],
                         ids=model_id)
def test_check(path):
    # exit status 1 when a block is above the tolerance: the figures are compared either way
    ref = json.loads(run_cli("check", path, "--samples", "3", "--seed", "7", "--ref", "origin", "--json",
                             check=False))
    rep = mbsens.check(mbsens.Model.load(path), samples=3, seed=7, ref="origin")
    assert rep.samples == ref["samples"]
    assert rep.worst == ref["worst_relative_error"]
    assert rep.passed(ref["tolerance"]) == ref["passed"]
