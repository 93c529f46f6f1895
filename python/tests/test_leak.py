"""No leak: the resident set stays flat over 10^5 calls of each kind (results
allocated or written to out=, tuples of results, arguments converted from
lists and views, errors raised from argument checks and from the library,
Data objects made and dropped, kinematics queries, short simulations), and
over 10^4 model loads.

Bound: 2 MiB of growth after a warm-up. One leaked object per call is at
least 32 bytes (the smallest pymalloc block of a Python object), 3.2 MB over
10^5 calls; a leaked array or library workspace is far more. The bound is
above the allocator's granularity in a steady loop (arenas of 256 KiB).
"""
import os

import numpy as np
import pytest

import mbsens
from conftest import SANITIZED, SRC

N = 100_000
BOUND = 2 * 1024 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def flat(f, n=N, warm=10_000):
    for _ in range(warm):
        f()
    before = rss()
    for _ in range(n):
        f()
    grown = rss() - before
    assert grown < BOUND, f"resident set grew by {grown / 1024:.0f} KiB over {n} calls"


pytestmark = pytest.mark.skipif(SANITIZED, reason="the sanitizer's allocator keeps freed memory in quarantine")


@pytest.fixture(scope="module")
def md():
    m = mbsens.Model.load(SRC / "models" / "double_pendulum.json")
    return m, mbsens.Data(m)


def test_results_and_out(md):
    m, d = md
    q, v = np.array([0.3, 0.2]), np.array([0.1, 0.4])
    out = np.empty(2)
    outs = (np.empty(2), np.empty((2, 2)), np.empty((2, 2)), np.empty((2, 2)))
    flat(lambda: mbsens.inverse_dynamics(m, d, q, v, v))
    flat(lambda: mbsens.inverse_dynamics(m, d, q, v, v, out=out))
    flat(lambda: mbsens.forward_dynamics_derivatives(m, d, q, v, v))
    flat(lambda: mbsens.forward_dynamics_derivatives(m, d, q, v, v, out=outs))
    flat(lambda: mbsens.inverse_dynamics(m, d, [0.3, 0.2], (0.1, 0.4), np.arange(4.0)[::2]))


def test_errors(md):
    m, d = md
    q = np.array([0.3, 0.2])

    def bad_arg():
        try:
            mbsens.inverse_dynamics(m, d, q, q, [1.0, np.nan])
        except ValueError:
            pass

    def bad_out():
        try:
            mbsens.mass_matrix(m, d, q, out=np.empty(3))
        except ValueError:
            pass

    def library_error():
        try:
            mbsens.inverse_dynamics(m, d, [1e308, 1e308], [1e308, 1e308], q)
        except mbsens.NumericalError:
            pass

    flat(bad_arg)
    flat(bad_out)
    flat(library_error)


def test_objects_and_queries(md):
    m, d = md
    mbsens.kinematics(m, d, [0.3, 0.2], [1.0, 2.0])
    flat(lambda: mbsens.Data(m))
    flat(lambda: (d.body_poses(), d.points(), d.point("body2.Q") if "body2.Q" in m.point_names else d.point(0)))
    flat(lambda: (m.coord_names, m.params, m.q0, m.param_values))
    flat(lambda: m.with_params(L1=1.5), n=N // 10, warm=1000)
    text = m.to_json()
    flat(lambda: mbsens.Model.from_string(text), n=N // 10, warm=1000)


def test_short_simulations(md):
    m, d = md
    flat(lambda: mbsens.simulate(m, tf=0.002, data=d), n=N // 10, warm=1000)
    tree = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")

    def raising(t, q, qd, qdd, rho, grad):
        raise KeyError("stop")

    def sens():
        try:
            mbsens.sensitivity(tree, tf=0.002, objective=raising)
        except KeyError:
            pass

    flat(sens, n=N // 100, warm=100)
