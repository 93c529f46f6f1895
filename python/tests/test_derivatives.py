"""Every derivative the Python API returns against central differences
computed here, in Python, from the functions it differentiates.

Tolerance of an entry (the test estimates both of its parts):
  truncation  the central difference D(h) has error c h^2 + O(h^4), so
              D(2h) - D(h) = 3 c h^2 + ...: 2 |D(2h) - D(h)| bounds it with
              a factor 6 of margin for the higher-order terms;
  round-off   each evaluation of f is off by its round-off r, measured as the
              spread of f over the formulations that compute it (reference
              points com, origin, joint; for forward dynamics also both
              algorithms and both frames of the fully recursive one) plus
              eps max |f| (the recursions mix all entries, so each carries
              round-off of the largest); D(h) then carries at most
              2 r / (2 h), taken 4x.
Steps h = 1e-5 (1 + |x|), near the optimum eps^(1/3) of central differences.

Euler parameters: q-derivatives are compared along the manifold |p| = 1 (3
tangent directions per quadruple, beside the other coordinates' axes). Off it
the functions are extended by convention (derivatives.h), and the fully
recursive forward dynamics in joint frames extends them differently from the
rotation formula its derivatives differentiate: only the radial direction
p itself differs, which the manifold never moves along.
"""
import numpy as np
import pytest

import mbsens
from conftest import SRC, random_state

EPS = np.finfo(float).eps
MODELS = [SRC / "models" / "double_pendulum.json", SRC / "tests" / "models" / "spring_tree.json",
          SRC / "models" / "fivebar.json", SRC / "models" / "halfcar_step.json", SRC / "models" / "bicycle.json",
          SRC / "tests" / "urdf" / "small_robot.urdf", SRC / "tests" / "models" / "tree_unordered.json"]


def models():
    out = [(p.name, mbsens.Model.load(p)) for p in MODELS]
    out.append(("chain_spherical_floating", mbsens.generate_chain(4, "spherical", True)))
    out.append(("chain_cardan", mbsens.generate_chain(3, "cardan")))
    return out


MODEL_LIST = models()
CONFIGS_ID = [(ref, "joint", "fr") for ref in ("com", "origin", "joint")]
CONFIGS_FD = [(ref, frames, alg) for ref in ("com", "origin", "joint") for frames in ("joint", "global")
              for alg in ("fr", "semi")]


def roundoff(m, f, configs):
    """The round-off of f(data, algorithm) (a vector): its spread over the configurations
    (ref, frames, algorithm) that compute it, plus eps max |f|."""
    vals = []
    for ref, frames, alg in configs:
        d = mbsens.Data(m)
        d.ref, d.fr_frames = ref, frames
        vals.append(f(d, alg))
    vals = np.array(vals)
    return np.max(np.abs(vals - vals[0]), axis=0) + EPS * np.max(np.abs(vals[0]))


def manifold_directions(m, q):
    """Columns: the unit vector of every coordinate that is not an Euler parameter, and
    three orthonormal directions tangent to |p| = 1 for every Euler-parameter quadruple."""
    cols, k = [], 0
    names = m.coord_names
    while k < m.nq:
        if names[k].endswith(".e0"):
            p = q[k:k + 4]
            # the orthonormal complement of p: the last three columns of a Householder reflection
            v = p.copy()
            v[0] += np.copysign(1.0, p[0])
            H = np.eye(4) - 2 * np.outer(v, v) / (v @ v)
            for c in range(1, 4):
                e = np.zeros(m.nq)
                e[k:k + 4] = H[:, c]
                cols.append(e)
            k += 4
        else:
            e = np.zeros(m.nq)
            e[k] = 1
            cols.append(e)
            k += 1
    return np.array(cols).T


def along(f, x, B, h):
    """Columns (f(x + h_j b_j) - f(x - h_j b_j)) / 2 h_j."""
    return np.array([(f(x + h[j] * B[:, j]) - f(x - h[j] * B[:, j])) / (2 * h[j]) for j in range(B.shape[1])]).T


def check_jacobian(name, A, f, x, r, B=None):
    """A (or A @ B: the derivative along the columns of B) against central differences of
    f at x; r: round-off of f (per row)."""
    B = np.eye(len(x)) if B is None else B
    h = 1e-5 * (1 + np.abs(B).T @ np.abs(x))
    D1, D2 = along(f, x, B, h), along(f, x, B, 2 * h)
    AB = A @ B
    tol = 2 * np.abs(D2 - D1) + 4 * r[:, None] / h[None, :]
    bad = np.abs(AB - D1) > tol
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{name}: {bad.sum()} entries off; at {i}: analytic {AB[i]:.12g}, differences "
                             f"{D1[i]:.12g}, tolerance {tol[i]:.3e}")


@pytest.mark.parametrize("name,m", MODEL_LIST, ids=[n for n, _ in MODEL_LIST])
def test_inverse_dynamics_derivatives(name, m):
    s = random_state(m, np.random.default_rng(11))
    q, qd, qdd = s["q"], s["qd"], s["qdd"]
    d = mbsens.Data(m)
    tau, K, C = mbsens.inverse_dynamics_derivatives(m, d, q, qd, qdd)
    r = roundoff(m, lambda dd, alg: mbsens.inverse_dynamics(m, dd, q, qd, qdd), CONFIGS_ID)
    assert np.all(np.abs(tau - mbsens.inverse_dynamics(m, d, q, qd, qdd)) <= 4 * r)
    check_jacobian(f"{name} dtau/dq", K, lambda x: mbsens.inverse_dynamics(m, d, x, qd, qdd), q, r,
                   manifold_directions(m, q))
    check_jacobian(f"{name} dtau/dqd", C, lambda x: mbsens.inverse_dynamics(m, d, q, x, qdd), qd, r)
    M = mbsens.mass_matrix(m, d, q)
    check_jacobian(f"{name} dtau/dqdd = M", M, lambda x: mbsens.inverse_dynamics(m, d, q, qd, x), qdd, r)
    P = mbsens.inverse_dynamics_param_derivatives(m, d, q, qd, qdd)
    if m.nparams:
        check_jacobian(f"{name} dtau/drho", P,
                       lambda x: mbsens.inverse_dynamics(mp := m.with_params(x), mbsens.Data(mp), q, qd, qdd),
                       m.param_values, r)
    # the directional derivative (one tangent sweep) equals the Jacobians times the
    # direction: both are exact, so they differ by round-off: that of the Jacobians'
    # entries (their spread over the reference points) times the direction, that of the
    # directional sweep (its spread), and that of the products (nv + 3) eps |A| |x|
    dq, dqd, dqdd, drho = s["dq"], s["dqd"], s["dqdd"], s["drho"]
    dtau = mbsens.inverse_dynamics_directional(m, d, q, qd, qdd, dq, dqd, dqdd, drho)
    full = K @ dq + C @ dqd + M @ dqdd + P @ drho

    def jacobian_product(dd, alg):
        _, K1, C1 = mbsens.inverse_dynamics_derivatives(m, dd, q, qd, qdd)
        return K1 @ dq + C1 @ dqd + M @ dqdd + P @ drho

    r_dir = roundoff(m, lambda dd, alg: mbsens.inverse_dynamics_directional(m, dd, q, qd, qdd, dq, dqd, dqdd,
                                                                             drho), CONFIGS_ID)
    scale = np.abs(K) @ np.abs(dq) + np.abs(C) @ np.abs(dqd) + np.abs(M) @ np.abs(dqdd) + np.abs(P) @ np.abs(drho)
    tol = 4 * (r_dir + roundoff(m, jacobian_product, CONFIGS_ID)) + (m.nv + 3) * EPS * scale
    assert np.all(np.abs(dtau - full) <= tol), np.max(np.abs(dtau - full) / tol)


@pytest.mark.parametrize("name,m", MODEL_LIST, ids=[n for n, _ in MODEL_LIST])
@pytest.mark.parametrize("alg", ["fr", "semi"])
def test_forward_dynamics_derivatives(name, m, alg):
    s = random_state(m, np.random.default_rng(12))
    q, qd, tau = s["q"], s["qd"], s["tau"]
    d = mbsens.Data(m)
    qdd, K, C, Minv = mbsens.forward_dynamics_derivatives(m, d, q, qd, tau, algorithm=alg)

    def fd(dd, a=alg, q=q, qd=qd, tau=tau):
        return mbsens.forward_dynamics(m, dd, q, qd, tau, algorithm=a)

    r = roundoff(m, lambda dd, a: fd(dd, a), CONFIGS_FD)
    # the same accelerations, computed along with the Jacobians (to round-off)
    assert np.all(np.abs(qdd - fd(d)) <= 4 * r)
    check_jacobian(f"{name} {alg} dqdd/dq", K, lambda x: fd(d, q=x), q, r, manifold_directions(m, q))
    check_jacobian(f"{name} {alg} dqdd/dqd", C, lambda x: fd(d, qd=x), qd, r)
    check_jacobian(f"{name} {alg} dqdd/dtau", Minv, lambda x: fd(d, tau=x), tau, r)
    if m.nparams:
        qdd2, P = mbsens.forward_dynamics_param_derivatives(m, d, q, qd, tau, algorithm=alg)
        assert np.all(np.abs(qdd2 - fd(d)) <= 4 * r)
        check_jacobian(f"{name} {alg} dqdd/drho", P,
                       lambda x: mbsens.forward_dynamics(mp := m.with_params(x), mbsens.Data(mp), q, qd, tau,
                                                         algorithm=alg), m.param_values, r)


@pytest.mark.parametrize("name,m", MODEL_LIST, ids=[n for n, _ in MODEL_LIST])
def test_forward_directional(name, m):
    """The directional derivative of FD against central differences along a direction
    (its Euler-parameter part tangent to |p| = 1) of the state, actuation and parameters."""
    s = random_state(m, np.random.default_rng(13))
    q, qd, tau = s["q"], s["qd"], s["tau"]
    B = manifold_directions(m, q)
    dq = B @ np.random.default_rng(14).standard_normal(B.shape[1])
    dqd, dtau = s["dqd"], s["dtau"]
    drho = s["drho"] * np.abs(m.param_values) * 1e-2 if m.nparams else None
    d = mbsens.Data(m)
    qdd, dqdd = mbsens.forward_dynamics_directional(m, d, q, qd, tau, dq, dqd, dtau, drho)

    def moved(e):
        mp = m.with_params(m.param_values + e[0] * drho) if m.nparams else m
        return mbsens.forward_dynamics(mp, mbsens.Data(mp), q + e[0] * dq, qd + e[0] * dqd, tau + e[0] * dtau)

    r = roundoff(m, lambda dd, a: mbsens.forward_dynamics(m, dd, q, qd, tau, algorithm=a), CONFIGS_FD)
    check_jacobian(f"{name} FD directional", dqdd[:, None], moved, np.zeros(1), r)
    assert np.all(np.abs(qdd - mbsens.forward_dynamics(m, d, q, qd, tau)) <= 4 * r)


def test_sensitivity_gradient_against_python_differences():
    """dpsi/drho of the DDM against central differences of psi over whole runs, in Python.
    psi of each run is the trapezoidal quadrature of the trapezoidal steps, solved to
    the Newton tolerance 1e-10 (|dz|): psi is smooth in rho to that level, and the
    round-off term below takes it as the noise r of psi (1e-10 times the sizes of psi)."""
    m = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")
    opts = {"tf": 0.2, "method": "ddm"}
    s = mbsens.sensitivity(m, **opts)
    psi = lambda x: mbsens.sensitivity(m.with_params(x), **opts).psi  # noqa: E731
    r = 1e-10 * (1 + np.abs(s.psi))
    check_jacobian("spring_tree dpsi/drho (ddm)", s.gradient, psi, m.param_values, r)


def test_own_objective_gradient():
    """A program's own objective written in Python (depending on q, qd, qdd and rho):
    its DDM gradient against central differences of its psi, and DDM = DAVM (the same
    discrete gradient; 1e-8 relative: the adjoint's linear solves against the DDM's)."""
    m = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")
    w = np.linspace(1, 2, m.nq)

    def track(t, q, qd, qdd, rho, grad):
        g = rho[0] * (w @ q) ** 2 + 0.1 * qd @ qd + 1e-3 * qdd @ qdd
        if not grad:
            return g
        g_rho = np.zeros(len(rho))
        g_rho[0] = (w @ q) ** 2
        return g, 2 * rho[0] * (w @ q) * w, 0.2 * qd, 2e-3 * qdd, g_rho

    opts = {"tf": 0.2}
    ddm = mbsens.sensitivity(m, method="ddm", objective=track, **opts)
    davm = mbsens.sensitivity(m, method="davm", objective=track, **opts)
    assert ddm.objective_names[-1] == "track"
    k = len(ddm.objective_names) - 1
    assert np.allclose(davm.gradient[k], ddm.gradient[k], rtol=1e-8, atol=1e-8 * np.abs(ddm.gradient[k]).max())
    psi = lambda x: mbsens.sensitivity(m.with_params(x), method="ddm", objective=track, **opts).psi[k:]  # noqa
    check_jacobian("own objective dpsi/drho", ddm.gradient[k:], psi, m.param_values, 1e-10 * (1 + np.abs(ddm.psi[k:])))
