"""Every bad input raises: a wrong type, shape or dtype, a non-finite value,
a wrong out= array, an unknown keyword, index or name, a Data of another
model, bad options of the long calls, bad model files and texts (with the
library's message: file:line:col or JSON path). Arguments are checked
before the library runs; nothing crashes the interpreter."""
import math

import numpy as np
import pytest

import mbsens
from conftest import SRC

M = SRC / "models"
BAD_ERRORS = (TypeError, ValueError, KeyError, IndexError, mbsens.Error)


@pytest.fixture(scope="module")
def setup():
    m = mbsens.Model.load(M / "double_pendulum.json")
    return m, mbsens.Data(m), mbsens.Model.load(M / "fivebar.json")


def calls(m, d):
    """Every per-instant function with good arguments: (name, function, positional args)."""
    q, v = np.array([0.3, 0.2]), np.array([0.1, -0.4])
    rho = np.ones(m.nparams)
    return [
        ("kinematics", mbsens.kinematics, [m, d, q, v, v]),
        ("inverse_dynamics", mbsens.inverse_dynamics, [m, d, q, v, v]),
        ("mass_matrix", mbsens.mass_matrix, [m, d, q]),
        ("bias_forces", mbsens.bias_forces, [m, d, q, v]),
        ("forward_dynamics", mbsens.forward_dynamics, [m, d, q, v, v]),
        ("inverse_dynamics_derivatives", mbsens.inverse_dynamics_derivatives, [m, d, q, v, v]),
        ("inverse_dynamics_param_derivatives", mbsens.inverse_dynamics_param_derivatives, [m, d, q, v, v]),
        ("inverse_dynamics_directional", mbsens.inverse_dynamics_directional, [m, d, q, v, v, v, v, v, rho]),
        ("forward_dynamics_derivatives", mbsens.forward_dynamics_derivatives, [m, d, q, v, v]),
        ("forward_dynamics_param_derivatives", mbsens.forward_dynamics_param_derivatives, [m, d, q, v, v]),
        ("forward_dynamics_directional", mbsens.forward_dynamics_directional, [m, d, q, v, v, v, v, v, rho]),
    ]


BAD_VECTORS = [
    ("too short", [0.1]), ("too long", [0.1, 0.2, 0.3]), ("2-D", [[0.1, 0.2]]), ("scalar", 0.5), ("empty", []),
    ("nan", [0.1, math.nan]), ("inf", [math.inf, 0.0]), ("-inf", np.array([0.0, -np.inf])),
    ("complex", np.array([1 + 1j, 0])), ("strings", ["a", "b"]), ("str", "ab"), ("bytes", b"ab"),
    ("object", np.array([object(), object()])), ("bool", np.array([True, False])), ("dict", {"a": 1}),
    ("long double", np.array([1, 2], dtype=np.longdouble)), ("ragged", [[1.0], [2.0, 3.0]]),
    ("None-element", [None, 1.0]),
]


def test_every_vector_argument(setup):
    m, d, _ = setup
    for name, f, args in calls(m, d):
        f(*args)   # the good call works
        for k in range(2, len(args)):
            for what, bad in BAD_VECTORS:
                a = list(args)
                a[k] = bad
                with pytest.raises((TypeError, ValueError)):
                    f(*a)
                    pytest.fail(f"{name}: argument {k} {what} accepted")


def test_required_missing_and_extra(setup):
    m, d, _ = setup
    for name, f, args in calls(m, d):
        nreq = 3 if name in ("mass_matrix",) else 4 if name == "bias_forces" else 5
        if name.startswith("forward_dynamics") or name == "kinematics":
            nreq = 4 if name.startswith("forward") else 3
        with pytest.raises(TypeError):
            f(*args[:nreq - 1])
        with pytest.raises(TypeError):
            f(*args, 1.0, 2.0, 3.0, 4.0, 5.0)
        with pytest.raises(TypeError, match="unexpected keyword"):
            f(*args, bogus=1)
        with pytest.raises(TypeError, match="multiple values"):
            f(*args[:3], q=args[2])


def test_model_and_data(setup):
    m, d, other = setup
    d_other = mbsens.Data(other)
    for name, f, args in calls(m, d):
        for bad_m in (None, 1, "model", d):
            with pytest.raises(TypeError):
                f(bad_m, *args[1:])
        for bad_d in (None, m, "data"):
            with pytest.raises(TypeError):
                f(args[0], bad_d, *args[2:])
        with pytest.raises(ValueError, match="another model"):
            f(args[0], d_other, *args[2:])
    with pytest.raises(TypeError):
        mbsens.Data(None)
    with pytest.raises(TypeError):
        mbsens.Model()


def test_out_arguments(setup):
    m, d, _ = setup
    q = np.array([0.3, 0.2])
    for bad, err in ((np.empty(2, dtype=np.float32), TypeError), (np.empty(3), ValueError),
                     (np.empty((2, 1)), ValueError), (np.empty(4)[::2], ValueError), ([0.0, 0.0], TypeError),
                     (np.empty(2, dtype=np.int64), TypeError), (np.empty(2, dtype=">f8"), TypeError)):
        with pytest.raises(err):
            mbsens.inverse_dynamics(m, d, q, q, q, out=bad)
    ro = np.empty(2)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        mbsens.inverse_dynamics(m, d, q, q, q, out=ro)
    with pytest.raises(ValueError):
        mbsens.mass_matrix(m, d, q, out=np.empty((2, 2), order="F"))
    with pytest.raises(TypeError, match="tuple of 3"):
        mbsens.inverse_dynamics_derivatives(m, d, q, q, q, out=(np.empty(2), np.empty((2, 2))))
    with pytest.raises(TypeError, match="tuple of 3"):
        mbsens.inverse_dynamics_derivatives(m, d, q, q, q, out=np.empty(2))
    same = np.empty((2, 2))
    with pytest.raises(ValueError, match="same array"):
        mbsens.inverse_dynamics_derivatives(m, d, q, q, q, out=(None, same, same))


def test_algorithm_and_settings(setup):
    m, d, _ = setup
    q = np.array([0.3, 0.2])
    with pytest.raises(ValueError, match="'fr'"):
        mbsens.forward_dynamics(m, d, q, q, algorithm="abc")
    with pytest.raises(TypeError):
        mbsens.forward_dynamics(m, d, q, q, algorithm=1)
    for attr, val, err in (("ref", "middle", ValueError), ("ref", 1, TypeError), ("fr_frames", "x", ValueError),
                           ("time", math.nan, ValueError), ("time", "0", TypeError), ("joint_load", [1.0], ValueError),
                           ("joint_load", [math.nan, 0], ValueError)):
        with pytest.raises(err):
            setattr(d, attr, val)
    with pytest.raises(AttributeError):
        d.model = m
    with pytest.raises(AttributeError):
        del d.ref


def test_indices_and_names(setup):
    m, d, _ = setup
    mbsens.kinematics(m, d, [0.1, 0.2])
    for bad, err in ((3, IndexError), (-1, IndexError), ("nobody", KeyError), (1.0, TypeError), (None, TypeError),
                     (True, TypeError)):
        with pytest.raises(err):
            d.body_pose(bad)
    with pytest.raises(KeyError, match="the model's"):
        d.point("no.such")
    with pytest.raises(IndexError):
        d.vector(0)          # the pendulum has no vectors
    with pytest.raises(ValueError, match="ground"):
        d.add_body_load(0, [1.0, 0, 0])
    with pytest.raises(ValueError):
        d.add_body_load(1, [1.0, 0, math.inf])
    with pytest.raises(KeyError):
        m.param("nope")
    with pytest.raises(KeyError):
        m.body_index("nope")
    with pytest.raises(KeyError):
        m.with_params(nope=1.0)
    with pytest.raises(ValueError):
        m.with_params(L1=math.nan)
    with pytest.raises(ValueError):
        m.with_params([1.0, 2.0])
    with pytest.raises(TypeError):
        m.with_params(L1="1")
    with pytest.raises(mbsens.ArgumentError, match="outside its bounds"):
        m.with_params(M_P=-1.0)      # the library checks the bounds


def test_library_errors(setup):
    m, d, five = setup
    chain = mbsens.generate_chain(3, "spherical", True)
    dc = mbsens.Data(chain)
    q = chain.q0.copy()
    q[3:7] *= 1.1                              # |p| = 1.1
    with pytest.raises(mbsens.NumericalError, match="not normalized"):
        mbsens.inverse_dynamics(chain, dc, q, np.zeros(chain.nv), np.zeros(chain.nv))
    assert "not normalized" in dc.error
    with pytest.raises(mbsens.NumericalError):
        mbsens.normalize_state(chain, np.zeros(chain.nq))
    # huge but finite arguments: an error, never a NaN handed back
    # (the library's message, naming the result and its entry)
    with pytest.raises(mbsens.NumericalError, match=r"^inverse dynamics: tau\[theta1\] is not finite"):
        mbsens.inverse_dynamics(m, d, [1e308, 1e308], [1e308, 1e308], [0, 0])
    with pytest.raises(mbsens.NumericalError, match=r"^forward dynamics: qdd\[theta1\] is not finite"):
        mbsens.forward_dynamics(m, d, [0, 0], [1e200, 1e200])
    with pytest.raises(mbsens.NumericalError, match=r"^kinematics: .* is not finite"):
        mbsens.kinematics(m, d, [0, 0], [1e200, 1e200])
    with pytest.raises(mbsens.NumericalError, match=r"is not finite"):
        mbsens.inverse_dynamics_derivatives(m, d, [0, 0], [1e200, 1e200], [0, 0])
    with pytest.raises(mbsens.NumericalError, match=r"^initial accelerations: .* is not finite"):
        mbsens.simulate(m, qd0=[1e200, 1e200], tf=0.01)
    with pytest.raises(mbsens.NumericalError, match="w is not finite"):
        mbsens.euler_omega_from_rates([1e300, 0, 0, 0], [0, 1e300, 1e300, 1e300])
    with pytest.raises(mbsens.NumericalError, match="pdot is not finite"):
        mbsens.euler_rates_from_omega([1e300, 0, 0, 0], [1e300, 1e300, 1e300])
    mbsens.kinematics(m, d, [0.1, 0.2], [3.0, 3.0])   # v = w x r overflows below
    with pytest.raises(mbsens.NumericalError, match="^body_point: .* is not finite"):
        d.body_point(1, [1e308, 1e308, 0])
    # a time grid longer than MBS_SIM_MAX_STEPS: the library's option check
    with pytest.raises(mbsens.ArgumentError, match="MBS_SIM_MAX_STEPS"):
        mbsens.simulate(m, tf=1e9, dt=1e-3)
    with pytest.raises(ValueError):
        mbsens.euler_omega_from_rates([1.0, 0, 0], [0, 0, 0, 0])
    with pytest.raises(ValueError):
        mbsens.euler_rates_from_omega([1.0, 0, 0, 0], [0, 0, 0, 0])


def test_model_files(tmp_path):
    with pytest.raises(mbsens.FileError, match="cannot read"):
        mbsens.Model.load(tmp_path / "missing.json")
    with pytest.raises(mbsens.Error):
        mbsens.Model.load(tmp_path)      # a directory
    with pytest.raises(mbsens.ParseError, match=r"bad_syntax\.json:\d+:\d+: "):
        mbsens.Model.load(SRC / "tests" / "models" / "bad_syntax.json")
    with pytest.raises(mbsens.ModelError, match=r"bad_inertia\.json"):
        mbsens.Model.load(SRC / "tests" / "models" / "bad_inertia.json")
    with pytest.raises(mbsens.ParseError, match=r"^t\.json:1:\d+: "):
        mbsens.Model.from_string("{", name="t.json")
    with pytest.raises(mbsens.ModelError, match=r"^<string>: "):
        mbsens.Model.from_string('{"bodies": []}')
    with pytest.raises(mbsens.ParseError, match=r"^x\.urdf:\d+:\d+: XML error"):
        mbsens.Model.from_string("<robot><link", format="urdf", name="x.urdf")
    with pytest.raises(mbsens.ModelError, match=r"malformed|no_inertial\.urdf:9: "):
        mbsens.Model.load(SRC / "tests" / "urdf" / "no_inertial.urdf")
    with pytest.raises(ValueError, match="URDF options"):
        mbsens.Model.load(M / "double_pendulum.json", floating_base=True)
    with pytest.raises(ValueError, match="format"):
        mbsens.Model.from_string("{}", format="yaml")
    with pytest.raises(ValueError, match="NUL"):
        mbsens.Model.from_string('{"a\x00": 1}')
    with pytest.raises(TypeError):
        mbsens.Model.load(None)
    with pytest.raises(TypeError):
        mbsens.Model.load(M / "double_pendulum.json", floating_base=1)


def test_options_of_long_calls(setup):
    m, d, five = setup
    for opts, err in (({"tff": 1.0}, TypeError), ({"dt": 0.0}, mbsens.ArgumentError), ({"dt": -1e-3}, ValueError),
                      ({"dt": "0.1"}, TypeError), ({"tf": math.inf}, ValueError), ({"integrator": "euler"}, ValueError),
                      ({"max_iterations": 2.5}, TypeError), ({"max_iterations": 0}, mbsens.ArgumentError),
                      ({"project": 1}, TypeError), ({"formulation": "abc"}, ValueError), ({"ref": 1}, TypeError),
                      ({"tangent": "exact"}, ValueError), ({"max_iterations": 2**40}, OverflowError),
                      ({"dofs": [7]}, ValueError)):
        with pytest.raises(err):
            mbsens.simulate(m, **opts)
    with pytest.raises(ValueError):
        mbsens.simulate(m, q0=[0.1])
    with pytest.raises(TypeError, match="progress"):
        mbsens.simulate(m, progress=3)
    with pytest.raises(ValueError, match="another model"):
        mbsens.simulate(m, data=mbsens.Data(five))
    with pytest.raises(mbsens.Error, match="constraint|loop|formulation"):
        mbsens.simulate(five, formulation="fr", tf=0.01)       # closed loops need a loop formulation
    with pytest.raises(ValueError, match="method"):
        mbsens.sensitivity(m, method="adjoint")
    with pytest.raises(mbsens.ArgumentError, match="objective"):
        mbsens.sensitivity(mbsens.Model.load(M / "human43.json"), tf=0.01)     # no objectives
    with pytest.raises(mbsens.UnsupportedError):
        mbsens.sensitivity(five, formulation="penalty", tf=0.01)
    with pytest.raises(TypeError, match="objective"):
        mbsens.sensitivity(five, objective="psi1")
    with pytest.raises(KeyError):
        mbsens.optimize(five, objective="nope", max_iter=1)
    with pytest.raises(ValueError):
        mbsens.optimize(five, weights=[1.0], max_iter=1)
    with pytest.raises(ValueError, match="fixed or free"):
        mbsens.optimize(five, fixed=["L_s1"], free=["L_s2"])
    with pytest.raises(TypeError):
        mbsens.optimize(five, max_iter=1.5)
    with pytest.raises(ValueError, match="samples"):
        mbsens.check(m, samples=0)
    with pytest.raises(ValueError, match="seed"):
        mbsens.check(m, seed=-1)
    with pytest.raises(ValueError, match="qd needs q"):
        mbsens.check(m, qd=[0.0, 0.0])
    with pytest.raises(mbsens.ArgumentError):
        mbsens.generate_chain(1)
    with pytest.raises(ValueError):
        mbsens.generate_chain(3, "planar_and_wrong")
