"""Threads and callbacks: separate Data objects in separate threads give the
results of serial calls, bit for bit (per-instant functions, simulate,
sensitivity); the GIL is released during long calls; one Data refuses a
second call while one runs; callbacks (progress, history, a Python
objective, optimize's per-iteration callback) run with the GIL, can stop the
call, and an exception they raise stops it cleanly and is raised by it;
Ctrl-C (KeyboardInterrupt) stops a long simulation."""
import _thread
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import mbsens
from conftest import SRC, random_state

M = SRC / "models"
NTHREADS = 4


def derivatives_run(m, states):
    d = mbsens.Data(m)
    out = []
    for s in states:
        out.append(mbsens.forward_dynamics_derivatives(m, d, s["q"], s["qd"], s["tau"]))
        out.append(mbsens.inverse_dynamics_derivatives(m, d, s["q"], s["qd"], s["qdd"]))
    return out


def same(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


def test_per_instant_threads_equal_serial():
    m = mbsens.Model.load(M / "human43.json")
    rng = np.random.default_rng(5)
    batches = [[random_state(m, rng) for _ in range(20)] for _ in range(NTHREADS)]
    serial = [derivatives_run(m, b) for b in batches]
    with ThreadPoolExecutor(NTHREADS) as ex:
        threaded = list(ex.map(lambda b: derivatives_run(m, b), batches))
    assert same(serial, threaded)


def test_simulate_and_sensitivity_threads_equal_serial():
    m = mbsens.Model.load(M / "double_pendulum.json")
    tree = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")
    jobs = [lambda: mbsens.simulate(m, tf=0.5, q0=[0.5, 0.1]), lambda: mbsens.simulate(m, tf=0.5, q0=[0.2, 0.3]),
            lambda: mbsens.sensitivity(tree, tf=0.1), lambda: mbsens.sensitivity(tree, tf=0.1, method="davm")]
    serial = [j() for j in jobs]
    with ThreadPoolExecutor(NTHREADS) as ex:
        threaded = list(ex.map(lambda j: j(), jobs))
    for a, b in zip(serial[:2], threaded[:2]):
        assert same([a.t, a.q, a.qd, a.qdd], [b.t, b.q, b.qd, b.qdd])
    for a, b in zip(serial[2:], threaded[2:]):
        assert same([a.psi, a.gradient], [b.psi, b.gradient])


def longest_pause_during(run):
    """(longest pause of this thread's loop while run() runs in another thread, duration)."""
    th = threading.Thread(target=run)
    start = time.perf_counter()
    th.start()
    last, gap = time.perf_counter(), 0.0
    while th.is_alive():
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
        time.sleep(0.001)
    th.join()
    return gap, time.perf_counter() - start


def test_gil_released_during_simulate():
    """While a simulation runs in another thread, this thread keeps running: the longest
    pause between two iterations of its loop is far below the simulation's duration (a
    simulation holding the GIL would stop it for the whole run). The run is lengthened
    until it lasts at least a second; the bound, half of it, is far above any
    scheduling pause."""
    m = mbsens.Model.load(M / "human43.json")
    tf = 0.05
    for _ in range(12):
        gap, duration = longest_pause_during(lambda: mbsens.simulate(m, tf=tf))
        if duration >= 1.0:
            break
        tf *= min(10.0, 2.0 / max(duration, 1e-3))
    assert duration >= 1.0, "the run was too short to tell"
    assert gap < 0.5 * duration, f"longest pause {gap:.3f} s of a {duration:.3f} s run"


def test_data_in_use_refuses_a_second_call():
    m = mbsens.Model.load(M / "double_pendulum.json")
    d = mbsens.Data(m)
    seen = []

    def progress(t, q, qd):
        if not seen:
            with pytest.raises(RuntimeError, match="in use"):
                mbsens.inverse_dynamics(m, d, q, qd, qd)
            with pytest.raises(RuntimeError, match="in use"):
                d.ref = "origin"
            other = mbsens.Data(m)    # another Data is fine
            seen.append(mbsens.inverse_dynamics(m, other, q, qd, qd))
        return None

    mbsens.simulate(m, tf=0.01, data=d, progress=progress)
    assert len(seen) == 1
    mbsens.inverse_dynamics(m, d, [0.1, 0.2], [0, 0], [0, 0])   # free again


def test_progress_callback_and_stop():
    m = mbsens.Model.load(M / "double_pendulum.json")
    calls = []

    def progress(t, q, qd):
        calls.append((t, q.copy(), qd.copy()))
        return False if len(calls) == 50 else None

    r = mbsens.simulate(m, tf=1.0, progress=progress)
    assert r.stopped and len(calls) == 50 and len(r.t) == 50
    assert [c[0] for c in calls] == r.t.tolist()
    assert np.array_equal(np.array([c[1] for c in calls]), r.q)
    full = mbsens.simulate(m, tf=1.0)
    assert not full.stopped and np.array_equal(full.q[:50], r.q)


class Boom(Exception):
    pass


def test_exceptions_in_callbacks_are_raised():
    m = mbsens.Model.load(M / "double_pendulum.json")
    d = mbsens.Data(m)
    n = []

    def progress(t, q, qd):
        n.append(t)
        if len(n) == 10:
            raise Boom("in progress")

    with pytest.raises(Boom, match="in progress"):
        mbsens.simulate(m, tf=1.0, data=d, progress=progress)
    assert len(n) == 10
    mbsens.simulate(m, tf=0.01, data=d)    # the Data is usable again
    tree = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")

    def objective(t, q, qd, qdd, rho, grad):
        if t > 0.05:
            raise Boom("in objective")
        return (0.0, np.zeros(tree.nq), np.zeros(tree.nq), np.zeros(tree.nq), np.zeros(tree.nparams)) if grad \
            else 0.0

    for method in ("ddm", "davm", "cavm", "fd"):
        with pytest.raises(Boom, match="in objective"):
            mbsens.sensitivity(tree, tf=0.1, method=method, objective=objective)
    with pytest.raises(Boom, match="in history"):
        mbsens.sensitivity(tree, tf=0.1, history=lambda t, psi, g: (_ for _ in ()).throw(Boom("in history")))
    halfcar = mbsens.Model.load(M / "halfcar_step.json")
    with pytest.raises(Boom, match="in callback"):
        mbsens.optimize(halfcar, tf=0.5, callback=lambda it: (_ for _ in ()).throw(Boom("in callback")))


def test_bad_objective_results():
    tree = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")
    for bad, err in ((lambda *a: "x", TypeError), (lambda *a: np.nan, ValueError),
                     (lambda t, q, qd, qdd, rho, grad: (1.0, q[:2], q, q, rho) if grad else 1.0, ValueError),
                     (lambda t, q, qd, qdd, rho, grad: 1.0, TypeError)):
        with pytest.raises(err):
            mbsens.sensitivity(tree, tf=0.05, objective=bad)


def test_history_and_optimize_callbacks():
    tree = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")
    rows = []
    s = mbsens.sensitivity(tree, tf=0.1, history=lambda t, psi, g: rows.append((t, psi, g)))
    assert [r[0] for r in rows] == pytest.approx(np.linspace(0, 0.1, 101), abs=1e-15)
    assert rows[-1][1].shape == s.psi.shape and rows[-1][2].shape == s.gradient.shape
    davm = []
    mbsens.sensitivity(tree, tf=0.1, method="davm", history=lambda t, psi, g: davm.append(g))
    assert davm and all(g is None for g in davm)     # the running gradient is the DDM's only
    # history observes: what it returns does not change the analysis
    again = mbsens.sensitivity(tree, tf=0.1, history=lambda t, psi, g: False)
    assert np.array_equal(again.gradient, s.gradient)
    halfcar = mbsens.Model.load(M / "halfcar_step.json")
    its = []
    r = mbsens.optimize(halfcar, tf=0.5, callback=lambda it: its.append(it) or (False if len(its) == 3 else None))
    assert r.stop_reason == "callback" and len(its) == 3 and its[0].iteration == 0
    assert its[-1].x.shape == (halfcar.nparams,) and isinstance(its[-1], mbsens.OptIteration)


@pytest.mark.parametrize("call", ["simulate", "sensitivity", "optimize"])
def test_ctrl_c_stops_a_long_call(call):
    """Ctrl-C (here _thread.interrupt_main, as the SIGINT handler does) stops runs of
    minutes within a second or so: simulate and the DDM within 1000 steps, optimize
    at its next iteration."""
    human = mbsens.Model.load(M / "human43.json")
    tree = mbsens.Model.load(SRC / "tests" / "models" / "spring_tree.json")
    halfcar = mbsens.Model.load(M / "halfcar_step.json")
    run = {"simulate": lambda: mbsens.simulate(human, tf=1000.0),
           "sensitivity": lambda: mbsens.sensitivity(tree, method="ddm", tf=500.0),
           "optimize": lambda: mbsens.optimize(halfcar, tf=0.5, max_iter=100000, max_eval=100000, pgtol=0.0,
                                               ftol=0.0, xtol=0.0)}[call]
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        run()
    timer.join()
    assert time.perf_counter() - t0 < 60
