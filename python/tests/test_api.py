"""The Python API's conventions: sizes (nq for q, nv for velocities), dtypes and
shapes accepted, out= (reused, returned, never copied into silently),
non-contiguous and non-float64 inputs, the Model's names and values,
with_params, JSON and pickling, URDF and JSON from strings, warnings, the
Data's settings and loads, queries after kinematics."""
import pickle
import warnings

import numpy as np
import pytest

import mbsens
from conftest import SRC

M = SRC / "models"


def test_sizes_and_names(pendulum):
    m = pendulum
    assert (m.nq, m.nv, m.ndof, m.nbodies, m.nparams) == (2, 2, 2, 2, 4)
    assert m.coord_names == ("theta1", "theta2") and m.velocity_names == m.coord_names
    assert m.body_names[0] == "ground" and len(m.body_names) == m.nbodies + 1
    assert len(m.joint_names) == m.nbodies and m.joint_types == ("revolute", "revolute")
    assert m.body_parents == (-1, 0, 1)
    assert m.param_names == ("L1", "L2", "M_P", "M_Q")
    assert m.params == dict(zip(m.param_names, m.param_values.tolist()))
    assert m.param("L1") == m.param(0) == m.param_values[0]
    assert m.body_index("body2") == 2 and m.coord_index("theta2") == 1 and m.param_index("M_Q") == 3
    assert m.point_index(m.point_names[1]) == 1
    assert m.joint_limits.shape == (2, 4) and np.isnan(m.joint_limits).all()
    assert m.simulation_options["dt"] > 0 and m.simulation_options["formulation"] in ("fr", "semi")
    assert repr(m).startswith("<mbsens.Model 'double_pendulum'")


def test_urdf_names_limits():
    m = mbsens.Model.load(SRC / "tests" / "urdf" / "small_robot.urdf")
    assert m.nq == m.nv
    assert not np.isnan(m.joint_limits).all()
    assert m.joint_nq == tuple(m.joint_coord_offsets[k + 1] - m.joint_coord_offsets[k]
                               for k in range(m.nbodies - 1)) + (m.nq - m.joint_coord_offsets[-1],)
    f = mbsens.Model.load(SRC / "tests" / "urdf" / "small_robot.urdf", floating_base=False)
    assert f.to_json() == m.to_json()


def test_with_params_and_json(pendulum, tmp_path):
    m = pendulum
    a = m.with_params({"L1": 2.0}, M_Q=3.0)
    assert a.param("L1") == 2.0 and a.param("M_Q") == 3.0 and a.param("L2") == m.param("L2")
    b = m.with_params(np.array([2.0, 1.0, 1.0, 3.0]))
    assert b.param_values.tolist() == [2.0, 1.0, 1.0, 3.0]
    assert m.param("L1") != 2.0  # the model itself never changes
    text = a.to_json()
    c = mbsens.Model.from_string(text)
    assert c.to_json() == text
    p = tmp_path / "a.json"
    p.write_text(text)
    assert mbsens.load(p).to_json() == text
    assert pickle.loads(pickle.dumps(a)).to_json() == text


def test_from_string_urdf_and_warnings():
    xml = (SRC / "tests" / "urdf" / "triangle.urdf").read_text()
    with pytest.warns(mbsens.ModelWarning, match=r"^tri\.urdf:15: link rod: inertia violates"):
        m = mbsens.Model.from_string(xml, format="urdf", name="tri.urdf")
    assert m.nbodies >= 1
    with pytest.raises(mbsens.ModelError, match=r"^tri\.urdf:15: "):
        mbsens.Model.from_string(xml, format="urdf", name="tri.urdf", strict_inertia=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", mbsens.ModelWarning)
        with pytest.raises(mbsens.ModelWarning):
            mbsens.Model.load(SRC / "tests" / "urdf" / "triangle.urdf")
    robot = (SRC / "tests" / "urdf" / "small_robot.urdf").read_text()
    assert mbsens.Model.from_string(robot, format="urdf").to_json() == \
        mbsens.Model.load(SRC / "tests" / "urdf" / "small_robot.urdf").to_json()


def test_out_is_filled_and_returned(pendulum):
    m, d = pendulum, mbsens.Data(pendulum)
    q, qd, qdd = np.array([0.3, -0.2]), np.array([1.0, 2.0]), np.array([0.5, 0.1])
    tau = mbsens.inverse_dynamics(m, d, q, qd, qdd)
    out = np.full(2, np.nan)
    r = mbsens.inverse_dynamics(m, d, q, qd, qdd, out=out)
    assert r is out and np.array_equal(out, tau)
    outs = (np.empty(2), np.empty((2, 2)), np.empty((2, 2)))
    r = mbsens.inverse_dynamics_derivatives(m, d, q, qd, qdd, out=outs)
    assert all(a is b for a, b in zip(r, outs))
    r2 = mbsens.inverse_dynamics_derivatives(m, d, q, qd, qdd, out=(None, outs[1], None))
    assert r2[1] is outs[1] and np.array_equal(r2[2], r[2])
    M = mbsens.mass_matrix(m, d, q, out=np.empty((2, 2)))
    assert np.array_equal(M, M.T)
    R = np.empty((m.nbodies + 1, 3, 3)), np.empty((m.nbodies + 1, 3))
    mbsens.kinematics(m, d, q)
    assert d.body_poses(out=R)[0] is R[0]


def test_inputs_any_real_array(pendulum):
    """Lists, integers, float32, non-contiguous and Fortran-ordered views give the same result."""
    m, d = pendulum, mbsens.Data(pendulum)
    q = np.array([1.0, -1.0])
    ref = mbsens.inverse_dynamics(m, d, q, np.zeros(2), np.zeros(2))
    for qq in ([1, -1], [1.0, -1.0], np.array([1, -1], dtype=np.int32), np.array([1, -1], dtype=np.float32),
               np.array([1.0, 5.0, -1.0])[::2], np.array([[1.0, 9], [-1.0, 9]])[:, 0], (1, -1)):
        assert np.array_equal(mbsens.inverse_dynamics(m, d, qq, (0, 0), [0.0, 0.0]), ref)
    big = np.asfortranarray(np.arange(9.0).reshape(3, 3))
    d.add_body_load(1, big[:, 0])


def test_keywords_and_positions(pendulum):
    m, d = pendulum, mbsens.Data(pendulum)
    q, z = np.array([0.3, 0.2]), np.zeros(2)
    a = mbsens.forward_dynamics(m, d, q, z, z, algorithm="semi")
    b = mbsens.forward_dynamics(model=m, data=d, q=q, qd=z, tau=None, algorithm="semi")
    c = mbsens.forward_dynamics(m, d, q, z)
    assert np.array_equal(a, b) and np.allclose(a, c, rtol=1e-14, atol=1e-14)
    with pytest.raises(TypeError, match="positional"):
        mbsens.forward_dynamics(m, d, q, z, z, "semi")


def test_data_settings_and_loads(pendulum):
    m = pendulum
    d = mbsens.Data(m)
    assert d.model is m and d.ref == "com" and d.fr_frames == "joint" and d.time == 0.0 and d.error == ""
    d.ref, d.fr_frames, d.time = "origin", "global", 0.25
    assert (d.ref, d.fr_frames, d.time) == ("origin", "global", 0.25)
    q, z = np.array([0.3, 0.2]), np.zeros(2)
    free = mbsens.inverse_dynamics(m, d, q, z, z)
    d.joint_load[:] = [1.0, 2.0]
    loaded = mbsens.inverse_dynamics(m, d, q, z, z)
    assert np.allclose(loaded, free - [1.0, 2.0], rtol=1e-14, atol=1e-13)   # M qdd - Q - load
    view = d.joint_load
    del d    # the view keeps the Data alive
    assert view.tolist() == [1.0, 2.0]
    d = mbsens.Data(m)
    d.joint_load = [3.0, 4.0]
    d.clear_loads()
    assert d.joint_load.tolist() == [0.0, 0.0]
    d.add_body_load("body2", [0.0, -10.0, 0.0], torque=[0, 0, 1.0], point=[0.0, 0.0, 0.0])
    assert not np.array_equal(mbsens.inverse_dynamics(m, d, q, z, z), free)


def test_queries_after_kinematics(pendulum):
    m, d = pendulum, mbsens.Data(pendulum)
    q, qd, qdd = np.array([0.3, 0.2]), np.array([1.0, -1.0]), np.array([0.1, 0.2])
    mbsens.kinematics(m, d, q, qd, qdd)
    R, o = d.body_pose("body1")
    assert np.allclose(R @ R.T, np.eye(3), atol=1e-15)
    Rs, os_ = d.body_poses()
    assert np.array_equal(Rs[1], R) and np.array_equal(os_[1], o)
    r, v, a = d.point(0)
    rs, vs, as_ = d.points()
    assert np.array_equal(rs[0], r) and np.array_equal(vs[0], v) and np.array_equal(as_[0], a)
    rp, vp, ap = d.body_point(m.point_bodies[0], np.zeros(3))
    assert np.allclose(rp, os_[m.point_bodies[0]], atol=0)
    assert d.kinetic_energy() > 0
    assert np.isfinite(d.potential_energy()) and d.elastic_energy(q) == 0.0
    v, w = d.body_velocity(2)
    assert w[2] == qd.sum()


def test_constraints_and_assembly():
    m = mbsens.Model.load(M / "fivebar.json")
    d = mbsens.Data(m)
    q0 = m.q0 + 0.01
    q, rep = mbsens.assemble(m, d, q0)
    assert rep["residual"] <= 1e-8 and np.max(np.abs(mbsens.constraints(m, d, q))) <= 1e-8
    assert mbsens.constraint_jacobian(m, d, q).shape == (m.nconstraints, m.nv)
    assert mbsens.constraint_rank(m, d, q) == m.nq - 2   # the five-bar has two degrees of freedom
    qd = mbsens.solve_velocity(m, d, q, np.array([1.0, 0, 0, 0]), fixed=["jA", "j3"])
    phi, J, phid, b, c = mbsens.constraint_eval(m, d, q, qd)
    assert np.allclose(J @ qd, b, atol=1e-9)
    qdd = mbsens.solve_acceleration(m, d, q, qd, np.zeros(4), fixed=[0, 3])
    assert np.allclose(J @ qdd, c, atol=1e-8)
    assert mbsens.constraint_violation(m, d, q, qd, qdd)[2] <= 1e-8


def test_generators_and_version():
    m = mbsens.generate_chain(5, "spherical", floating_base=True)
    assert m.nq == 7 + 4 * 4 and m.nv == m.nq
    s = mbsens.generate_spline_body(8, tf=2.0)
    assert s.nparams == 8
    assert mbsens.__version__ == mbsens.library_version


def test_objective_trace():
    m = mbsens.Model.load(M / "halfcar_step.json")
    t, g, psi = mbsens.objective_trace(m, tf=0.5)
    assert len(t) == len(g) == len(psi) == 501 and t[-1] == 0.5 and psi[0] == 0.0
    s = mbsens.sensitivity(m, tf=0.5)
    assert abs(psi[-1] - s.psi[0]) <= 1e-12 * abs(s.psi[0]) or m.nobjectives > 1


def test_integrator_steps_and_loads(pendulum):
    """The stepper gives simulate()'s trajectory (the same steps; the time is summed
    step by step instead of t0 + k dt, so states agree to the round-off of t, 1e-12),
    and loads written between steps act on the next step."""
    m = pendulum
    it = mbsens.Integrator(m, dt=1e-3)
    assert it.t == 0.0 and np.array_equal(it.q, m.q0) and it.options["integrator"] == "trapezoidal"
    r = mbsens.simulate(m, tf=0.5)
    t = it.step(n=500)
    assert abs(t - 0.5) <= 1e-12 and it.stats["steps"] == 500
    assert np.allclose(it.q, r.q[-1], rtol=0, atol=1e-12) and np.allclose(it.qd, r.qd[-1], rtol=0, atol=1e-11)
    it.reset(q=[0.5, 0.5])
    d = it.data
    for _ in range(2000):          # a damping torque -c qd on both joints, applied between steps
        d.joint_load[:] = -2.0 * it.qd
        it.step()
    dd = mbsens.Data(m)
    mbsens.kinematics(m, dd, it.q, it.qd)
    e_end = dd.kinetic_energy() + dd.potential_energy()
    mbsens.kinematics(m, dd, [0.5, 0.5], [0, 0])
    e0 = dd.potential_energy()
    assert e_end < e0 - 1.0            # the damping took energy out
    five = mbsens.Model.load(M / "fivebar.json")       # closed loops: the formulation's stepper
    fi = mbsens.Integrator(five, formulation="ali3p")
    fi.step(n=100)
    assert abs(fi.t - 0.1) < 1e-12
    # the same steps up to the round-off of the summed time, which moves the iterates of
    # the Newton iteration (converged to |dz| < 1e-10) by at most its tolerance: 10x that
    assert np.allclose(fi.q, mbsens.simulate(five, formulation="ali3p", tf=0.1).q[-1], rtol=0, atol=1e-9)
    with pytest.raises(mbsens.Error, match="formulation"):
        mbsens.Integrator(five, formulation="fr")
    with pytest.raises(ValueError):
        it.step(h=0.0)
    with pytest.raises(TypeError):
        mbsens.Integrator(m, bogus=1)
    with pytest.raises(TypeError, match="multiple"):
        mbsens.Integrator(m, mbsens.Data(m), data=mbsens.Data(m))


def test_none_options_are_not_given(pendulum):
    a = mbsens.simulate(pendulum, tf=0.05, ref=None, integrator=None, formulation=None)
    b = mbsens.simulate(pendulum, tf=0.05)
    assert np.array_equal(a.q, b.q) and a.options == b.options


def test_objectives_by_name_and_weights():
    m = mbsens.Model.load(M / "halfcar_step.json")
    a = mbsens.optimize(m, objective="comfort", max_iter=1, tf=0.3)
    b = mbsens.optimize(m, weights={"comfort": 1.0}, max_iter=1, tf=0.3)
    c = mbsens.optimize(m, weights=[0.0, 1.0, 0.0], max_iter=1, tf=0.3)
    assert a.x.tolist() == b.x.tolist() == c.x.tolist() and a.psi_final == b.psi_final
    t, g, psi = mbsens.objective_trace(m, objective="comfort", tf=0.3)
    t2, g2, psi2 = mbsens.objective_trace(m, weights={"comfort": 2.0}, tf=0.3)
    assert np.array_equal(t, t2) and np.allclose(g2, 2 * g, rtol=1e-15, atol=0)


def test_matrixr_dofs():
    """Matrix R's independent coordinates by name (the model's own choice gives the default
    run bit for bit) or as point components (another discretization of the same motion: it
    differs by the O(h^2) of the trapezoidal rule, far below 1e-5 over 0.05 s at 1 ms)."""
    f = mbsens.Model.load(M / "fivebar.json")
    a = mbsens.simulate(f, formulation="matrixr", tf=0.05)
    b = mbsens.simulate(f, formulation="matrixr", tf=0.05, dofs=[f.coord_names[i] for i in f.assembly_fixed])
    assert np.array_equal(a.q, b.q)
    c = mbsens.simulate(f, formulation="matrixr", tf=0.05, dofs=[("A1.P1", "x"), ("b23.P3", "y")])
    assert np.max(np.abs(c.q - a.q)) < 1e-5
    with pytest.raises(KeyError):
        mbsens.simulate(f, formulation="matrixr", dofs=["nope"])
    with pytest.raises(ValueError):
        mbsens.simulate(f, formulation="matrixr", dofs=[("A1.P1", "w")])
