"""The Jacobians (mbsens/jacobians.h) and the velocity map (mbsens/manifold.h)
from Python: equal to the command line's `kinematics --jacobian --com`
bit for bit (it prints numbers that read back exactly), consistent with
the body kinematics (J v = [v_P; omega], J vd + J-dot v = [a_P; alpha],
A_G v = h_G), against central differences on a revolute chain, in both
velocity conventions; the shapes and the errors of bad arguments."""
import json

import numpy as np
import pytest

import mbsens
from conftest import SRC, run_cli_json

EPS = np.finfo(float).eps


def tangent(model):
    """The model with tangent velocities on its spherical and floating joints."""
    spec = json.loads(model.to_json())
    spec["velocities"] = "tangent"
    return mbsens.Model.from_string(json.dumps(spec))


@pytest.fixture(scope="module")
def chains():
    euler = mbsens.generate_chain(3, "spherical", floating_base=True)
    return {"euler": euler, "tangent": tangent(euler)}


def state(model, seed):
    rng = np.random.default_rng(seed)
    q = model.q0.copy()
    return q, rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)


def test_sizes_and_names(chains):
    e, t = chains["euler"], chains["tangent"]
    assert (e.nq, e.nv, t.nq, t.nv) == (15, 15, 15, 12)
    assert t.velocity_names[:6] == ("j1.vx", "j1.vy", "j1.vz", "j1.wx", "j1.wy", "j1.wz")
    assert e.velocity_names == e.coord_names
    assert (t.joint_nq, t.joint_nv, t.joint_vel_offsets) == ((7, 4, 4), (6, 3, 3), (0, 6, 9))
    assert (e.joint_velocities, t.joint_velocities) == (("euler_rates",) * 3, ("tangent",) * 3)


@pytest.mark.parametrize("conv", ["euler", "tangent"])
def test_against_cli(chains, conv, tmp_path):
    """The same numbers as `mbsens kinematics --jacobian --com --json`."""
    m = chains[conv]
    path = tmp_path / "chain.json"
    path.write_text(m.to_json())
    q, v, vd = state(m, 1)
    d = mbsens.Data(m)
    mbsens.kinematics(m, d, q, v, vd)
    lst = lambda x: ",".join(repr(float(a)) for a in x)   # noqa: E731
    for axes in ("world", "local"):
        cli = run_cli_json("kinematics", path, "--q", lst(q), "--qd", lst(v), "--qdd", lst(vd), "--jacobian",
                           "link2", "--point", "0.1,0.02,-0.03", "--axes", axes, "--com", "--json")
        assert cli["velocities"] == list(m.velocity_names)
        J = d.frame_jacobian("link2", [0.1, 0.02, -0.03], axes)
        assert J.shape == (6, m.nv)
        assert J.tolist() == cli["jacobian"]["J"]
        assert d.frame_jacobian_dot_v("link2", [0.1, 0.02, -0.03], axes=axes).tolist() == cli["jacobian"]["Jdot_v"]
    com = cli["com"]
    rG, vG, aG = d.com()
    assert (rG.tolist(), vG.tolist(), aG.tolist()) == (com["r_G"], com["v_G"], com["a_G"])
    assert d.com_jacobian().tolist() == com["J_G"]
    assert d.centroidal_momentum().tolist() == com["h_G"]
    assert d.centroidal_momentum_matrix().tolist() == com["A_G"]
    assert d.centroidal_momentum_dot_v().tolist() == com["AGdot_v"]


@pytest.mark.parametrize("conv", ["euler", "tangent"])
def test_consistent_with_kinematics(chains, conv):
    """J v and J vd + J-dot v are the point's velocity and acceleration with
    the body's angular ones; A_G v = h_G; J_G v = v_G; the point Jacobian is
    the frame Jacobian's linear rows. Bound: round-off of sums of nv products
    of O(1) terms, 16 eps x nv."""
    m = chains[conv]
    q, v, vd = state(m, 2)
    d = mbsens.Data(m)
    mbsens.kinematics(m, d, q, v, vd)
    tol = 16 * EPS * m.nv
    local = [0.3, 0.0, 0.0]
    J = d.frame_jacobian("link3", local)
    r, vP, aP = d.body_point("link3", local)
    _, w = d.body_velocity("link3")
    _, al = d.body_acceleration("link3")
    np.testing.assert_allclose(J @ v, np.r_[vP, w], rtol=0, atol=tol)
    np.testing.assert_allclose(J @ vd + d.frame_jacobian_dot_v("link3", local), np.r_[aP, al], rtol=0, atol=tol)
    np.testing.assert_allclose(d.centroidal_momentum_matrix() @ v, d.centroidal_momentum(), rtol=0, atol=tol)
    np.testing.assert_allclose(d.com_jacobian() @ v, d.com()[1], rtol=0, atol=tol)
    Jp = d.point_jacobian("link3.tip")
    assert np.array_equal(Jp, d.frame_jacobian("link3", local)[:3])
    # local axes: the world rows turned into the body's axes
    R, _ = d.body_pose("link3")
    Jl = d.frame_jacobian("link3", local, axes="local")
    np.testing.assert_allclose(Jl, np.r_[R.T @ J[:3], R.T @ J[3:]], rtol=0, atol=tol)


def test_central_differences_revolute():
    """Columns of J_G and of the point Jacobian against central differences
    of r_G and of the point in q (nq == nv): truncation h^2 |r'''| / 6 with
    |r'''| <= 1 (0.3 m links, unit rates), h = 1e-5: about 2e-11, plus the
    round-off eps / h: 2e-11; bound 1e-9."""
    m = mbsens.generate_chain(4, "revolute")
    d = mbsens.Data(m)
    q = m.q0 + 0.3
    mbsens.kinematics(m, d, q)
    Jp, JG = d.point_jacobian("link4.tip"), d.com_jacobian()
    h = 1e-5
    for c in range(m.nv):
        e = np.zeros(m.nq)
        e[c] = h
        mbsens.kinematics(m, d, q + e)
        rp, rGp = d.point("link4.tip")[0], d.com()[0]
        mbsens.kinematics(m, d, q - e)
        rm, rGm = d.point("link4.tip")[0], d.com()[0]
        np.testing.assert_allclose(Jp[:, c], (rp - rm) / (2 * h), rtol=0, atol=1e-9)
        np.testing.assert_allclose(JG[:, c], (rGp - rGm) / (2 * h), rtol=0, atol=1e-9)


def test_velocity_map(chains):
    """qd = T v; the map back; qdd = T vd + T-dot v against central
    differences of T along qd (truncation h^2 |T'''| |v| / 6 ~ 1e-12 for unit
    rates at h = 1e-6, round-off eps / h ~ 2e-10; bound 1e-8)."""
    t, e = chains["tangent"], chains["euler"]
    q, v, vd = state(t, 3)
    T = mbsens.velocity_map(t, q)
    assert T.shape == (t.nq, t.nv)
    qd, qdd = mbsens.rates_from_velocity(t, q, v, vd)
    np.testing.assert_allclose(T @ v, qd, rtol=0, atol=4 * EPS * t.nv)
    v2, vd2 = mbsens.velocity_from_rates(t, q, qd, qdd)
    np.testing.assert_allclose(v2, v, rtol=0, atol=64 * EPS)
    np.testing.assert_allclose(vd2, vd, rtol=0, atol=64 * EPS)
    h = 1e-6
    Tdot = (mbsens.velocity_map(t, q + h * qd) - mbsens.velocity_map(t, q - h * qd)) / (2 * h)
    np.testing.assert_allclose(qdd, T @ vd + Tdot @ v, rtol=0, atol=1e-8)
    qd1, none = mbsens.rates_from_velocity(t, q, v)
    assert none is None and np.array_equal(qd1, qd)
    # Euler rates: the identity
    assert np.array_equal(mbsens.velocity_map(e, e.q0), np.eye(e.nq))


def test_bad_arguments(chains):
    t = chains["tangent"]
    d = mbsens.Data(t)
    mbsens.kinematics(t, d, t.q0)
    with pytest.raises(ValueError, match="axes: expected 'world' or 'local', got 'body'"):
        d.frame_jacobian("link1", axes="body")
    with pytest.raises(ValueError, match=r"point: expected shape \(3,\), got \(2,\)"):
        d.frame_jacobian("link1", [1.0, 2.0])
    with pytest.raises(ValueError, match=r"out: expected shape \(6, 12\), got \(6, 15\)"):
        d.frame_jacobian("link1", out=np.zeros((6, 15)))
    with pytest.raises(KeyError, match="no body named 'no_such_body'"):
        d.frame_jacobian("no_such_body")
    with pytest.raises(ValueError, match=r"^v: expected shape \(12,\), got \(15,\)$"):
        mbsens.rates_from_velocity(t, t.q0, np.zeros(t.nq))
    with pytest.raises(ValueError, match=r"^v\[11\] \(j3.wz\) is nan"):
        mbsens.rates_from_velocity(t, t.q0, np.r_[np.zeros(t.nv - 1), np.nan])
    with pytest.raises(ValueError, match=r"^qd: expected shape \(15,\), got \(12,\)$"):
        mbsens.velocity_from_rates(t, t.q0, np.zeros(t.nv))
    with pytest.raises(ValueError, match=r"^q: expected shape \(15,\), got \(12,\)$"):
        mbsens.velocity_map(t, np.zeros(t.nv))
    with pytest.raises(TypeError, match="model must be an mbsens.Model"):
        mbsens.velocity_map(d, t.q0)
    out = np.zeros((6, t.nv))
    assert d.centroidal_momentum_matrix(out=out) is out
