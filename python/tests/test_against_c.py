"""Every per-instant function from Python equals the same C call bit for bit,
on every shipped model, for every reference point and both frames of the fully
recursive algorithm, at random states. The C side is mbs_pyref (pyref.c),
which makes the same calls in the same order on a fresh data and prints 17
significant digits (they read back exactly)."""
import json
import subprocess

import numpy as np
import pytest

import mbsens
from conftest import PYREF, SRC, model_id, random_state, shipped_models

CONFIGS = [("com", "joint"), ("origin", "joint"), ("joint", "joint"), ("com", "global")]
NSTATES = 3


def c_results(path, states):
    req = {"model": str(path), "configs": [list(c) for c in CONFIGS],
           "states": [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in s.items()} for s in states]}
    r = subprocess.run([str(PYREF)], input=json.dumps(req), capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def put(o, key, f):
    """o[key] = f() flattened, or o[key + '.rc'] = the status of the library error it raised."""
    try:
        v = f()
    except mbsens.Error as e:
        o[key + ".rc"] = e.code
        return None
    o[key] = np.ravel(v).tolist()
    return v


def py_state_results(m, d, s):
    """The calls of pyref.c's state_results, in its order."""
    o = {}
    nc = m.nconstraints
    d.time = s["t"]
    try:
        mbsens.kinematics(m, d, s["q"], s["qd"], s["qdd"])
        o["kinematics.rc"] = 0
    except mbsens.Error as e:
        o["kinematics.rc"] = e.code
    if o["kinematics.rc"] == 0:
        R, org = d.body_poses()
        nb = m.nbodies + 1
        o["body_rotations"] = R.ravel().tolist()
        o["body_origins"] = org.ravel().tolist()
        o["body_coms"] = np.array([d.body_com(b) for b in range(nb)]).ravel().tolist()
        o["body_velocities"] = np.array([np.concatenate(d.body_velocity(b)) for b in range(nb)]).ravel().tolist()
        o["body_accelerations"] = np.array([np.concatenate(d.body_acceleration(b))
                                            for b in range(nb)]).ravel().tolist()
        r, v, a = d.points()
        o["points"] = np.hstack([r, v, a]).ravel().tolist()
        u, ud, udd = d.vectors()
        o["vectors"] = np.hstack([u, ud, udd]).ravel().tolist()
        o["energies"] = [d.kinetic_energy(), d.potential_energy()]
    q, qd, qdd, tau = s["q"], s["qd"], s["qdd"], s["tau"]
    put(o, "inverse_dynamics", lambda: mbsens.inverse_dynamics(m, d, q, qd, qdd))
    put(o, "mass_matrix", lambda: mbsens.mass_matrix(m, d, q))
    put(o, "bias_forces", lambda: mbsens.bias_forces(m, d, q, qd))
    for alg in ("fr", "semi"):
        put(o, f"forward_dynamics.{alg}", lambda: mbsens.forward_dynamics(m, d, q, qd, tau, algorithm=alg))
    put_tuple(o, ["id_derivatives.tau", "id_derivatives.dq", "id_derivatives.dqd"],
              lambda: mbsens.inverse_dynamics_derivatives(m, d, q, qd, qdd))
    put(o, "id_param_derivatives", lambda: mbsens.inverse_dynamics_param_derivatives(m, d, q, qd, qdd))
    put(o, "id_directional", lambda: mbsens.inverse_dynamics_directional(m, d, q, qd, qdd, s["dq"], s["dqd"],
                                                                          s["dqdd"], s["drho"]))
    for alg in ("fr", "semi"):
        put_tuple(o, [f"fd_derivatives.{alg}.{p}" for p in ("qdd", "dq", "dqd", "dtau")],
                  lambda: mbsens.forward_dynamics_derivatives(m, d, q, qd, tau, algorithm=alg))
    put_tuple(o, ["fd_param_derivatives.qdd", "fd_param_derivatives.drho"],
              lambda: mbsens.forward_dynamics_param_derivatives(m, d, q, qd, tau))
    put_tuple(o, ["fd_directional.qdd", "fd_directional.dqdd"],
              lambda: mbsens.forward_dynamics_directional(m, d, q, qd, tau, s["dq"], s["dqd"], s["dtau"],
                                                          s["drho"]))
    if nc > 0:
        put_tuple(o, [f"constraint_eval.{p}" for p in ("phi", "Phi_q", "phid", "b", "c")],
                  lambda: mbsens.constraint_eval(m, d, q, qd, s["t"]))
        try:
            o["constraint_rank"] = mbsens.constraint_rank(m, d, q, s["t"])
        except mbsens.Error:
            o["constraint_rank"] = -1
        put(o, "constraint_violation", lambda: mbsens.constraint_violation(m, d, q, qd, qdd, s["t"]))
    put_tuple(o, ["normalize_state.q", "normalize_state.qd"], lambda: mbsens.normalize_state(m, q, qd))
    return o


def put_tuple(o, keys, f):
    try:
        vals = f()
    except mbsens.Error as e:
        for k in keys:
            o[k + ".rc"] = e.code
        return
    for k, v in zip(keys, vals):
        o[k] = np.ravel(v).tolist()


@pytest.mark.parametrize("path", shipped_models(), ids=model_id)
def test_bit_for_bit(path):
    m = mbsens.Model.load(path)
    rng = np.random.default_rng(abs(hash(path.name)) % 2**32)
    states = [random_state(m, rng) for _ in range(NSTATES)]
    ref = c_results(path, states)
    assert len(ref) == len(CONFIGS)
    for (refpt, frames), cres in zip(CONFIGS, ref):
        d = mbsens.Data(m)
        d.ref = refpt
        d.fr_frames = frames
        for k, s in enumerate(states):
            py = py_state_results(m, d, s)
            assert set(py) == set(cres[k]), f"{path.name} {refpt}/{frames} state {k}: different results"
            for key in py:
                assert py[key] == cres[k][key], f"{path.name} {refpt}/{frames} state {k}: {key} differs"


@pytest.mark.parametrize("n,joint,floating", [(4, "spherical", True), (3, "cardan", False)])
def test_generated_chains(tmp_path, n, joint, floating):
    """Spherical and floating joints (Euler parameters) on generated chains, bit for bit."""
    text = mbsens.generate_chain_json(n, joint, floating)
    path = tmp_path / "chain.json"
    path.write_text(text)
    m = mbsens.generate_chain(n, joint, floating)
    assert m.to_json() == mbsens.Model.load(path).to_json()
    rng = np.random.default_rng(n)
    states = [random_state(m, rng) for _ in range(NSTATES)]
    ref = c_results(path, states)
    for (refpt, frames), cres in zip(CONFIGS, ref):
        d = mbsens.Data(m)
        d.ref, d.fr_frames = refpt, frames
        for k, s in enumerate(states):
            assert py_state_results(m, d, s) == cres[k], f"chain {n} {joint}: {refpt}/{frames} state {k}"
