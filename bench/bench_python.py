"""Per-call cost of the Python package against the same calls in C, and the
speed-up of separate Data objects in threads (docs/python.md, "Cost";
docs/benchmarks.md). Run with the interpreter the package was built for:

    /usr/bin/python3 bench/bench_python.py [BUILD_DIR] [--reps N] [--min-time S] [--clock cpu] [--quick]

BUILD_DIR (default build) holds the package (BUILD_DIR/python) and
bench/bench_python_ref, the C side. Repetitions are interleaved: C (one
repetition of bench_python_ref), then Python, N times; the figures are the
medians over repetitions, and the overhead is the median of the per-repetition
differences Python - C (ratios likewise), so slow drifts of a shared machine
hit both sides alike. --clock cpu times the per-call rows with the thread's
CPU time on both sides (a shared machine: the time the thread was
descheduled is left out); the thread speed-ups are always wall-clock.

Rows:
  inverse_dynamics, out=     double pendulum, arrays given for every argument
  inverse_dynamics           the same, the result allocated
  simulate 10^4 steps        trapezoidal rule, tf 10 s, dt 1 ms, rows recorded
  ... C in this process      mbs_simulate of BUILD_DIR/libmbsens.so called through
                             ctypes from this Python process (no recording):
                             the C code's own cost in the interpreter's process
Threads: the same work split over 1 and 2 threads with one Data each
(human43 forward-dynamics derivatives at 64 states; 8 simulations of the
double pendulum of 2 s); the speed-up is time(1 thread) / time(2 threads).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_path(build):
    sys.path.insert(0, str(Path(build).resolve() / "python"))


CLOCK = time.perf_counter_ns


def per_call_ns(f, min_time):
    """ns per call of f() in a loop lasting at least min_time seconds."""
    n = 1
    while True:
        t0 = CLOCK()
        for _ in range(n):
            f()
        dt = CLOCK() - t0
        if dt >= min_time * 1e9:
            return dt / n
        n *= 2 if dt < min_time * 1e8 else max(2, int(1.2 * min_time * 1e9 / max(dt, 1)))


def c_side(build, min_time, clock):
    exe = Path(build) / "bench" / "bench_python_ref"
    out = subprocess.run([str(exe), "--reps", "1", "--min-time", str(min_time), "--clock", clock],
                         capture_output=True, text=True, check=True, env=dict(os.environ, MBS_SOURCE_DIR=str(ROOT)))
    return {k: float(v) for k, v in (line.split() for line in out.stdout.splitlines())}


def python_side(mbsens, np, min_time):
    m = mbsens.Model.load(ROOT / "models" / "double_pendulum.json")
    d = mbsens.Data(m)
    q, qd, qdd, out = np.array([0.3, -0.2]), np.array([1.0, 2.0]), np.array([0.5, 0.1]), np.empty(2)
    f = mbsens.inverse_dynamics
    res = {"id_out_ns": per_call_ns(lambda: f(m, d, q, qd, qdd, out=out), min_time),
           "id_alloc_ns": per_call_ns(lambda: f(m, d, q, qd, qdd), min_time)}
    sim = mbsens.simulate
    t0 = CLOCK()
    runs = 0
    while CLOCK() - t0 < min_time * 1e9 or runs == 0:
        r = sim(m, tf=10.0, dt=1e-3, t0=0.0, data=d)
        runs += 1
    res["sim_ns"] = (CLOCK() - t0) / runs
    assert len(r.t) == 10001
    return res


class InProcessC:
    """mbs_simulate of the shared library, called through ctypes in this process, with
    the option layout the C side printed."""

    def __init__(self, build, layout):
        import ctypes
        import struct
        self.ct = ctypes
        lib = ctypes.CDLL(str(Path(build) / "libmbsens.so"))
        lib.mbs_model_load.restype = ctypes.c_void_p
        lib.mbs_data_create.restype = ctypes.c_void_p
        n = int(layout["sizeof_sim_options"])
        opts_t = type("opts", (ctypes.Structure,), {"_fields_": [("b", ctypes.c_ubyte * n)]})
        lib.mbs_model_sim_options.restype = opts_t
        lib.mbs_model_sim_options.argtypes = [ctypes.c_void_p]
        self.err = ctypes.create_string_buffer(int(layout["sizeof_error"]))
        self.stats = ctypes.create_string_buffer(int(layout["sizeof_sim_stats"]))
        self.m = ctypes.c_void_p(lib.mbs_model_load(str(ROOT / "models" / "double_pendulum.json").encode(), self.err))
        self.d = ctypes.c_void_p(lib.mbs_data_create(self.m, self.err))
        buf = bytearray(bytes(lib.mbs_model_sim_options(self.m).b))
        for key, v in (("offset_t0", 0.0), ("offset_dt", 1e-3), ("offset_tf", 10.0)):
            struct.pack_into("d", buf, int(layout[key]), v)
        self.opts = ctypes.create_string_buffer(bytes(buf), n)
        self.lib = lib

    def run(self):
        rc = self.lib.mbs_simulate(self.m, self.d, self.opts, None, None, None, None, self.stats, self.err)
        assert rc == 0, self.err.value


def threads_speedup(mbsens, np, reps):
    human = mbsens.Model.load(ROOT / "models" / "human43.json")
    rng = np.random.default_rng(1)
    states = [mbsens.normalize_state(human, human.q0 + 0.3 * rng.standard_normal(human.nq),
                                     rng.standard_normal(human.nv)) for _ in range(64)]
    pend = mbsens.Model.load(ROOT / "models" / "double_pendulum.json")

    def derivs(part):
        d = mbsens.Data(human)
        tau = np.zeros(human.nv)
        for q, qd in part:
            for _ in range(20):
                mbsens.forward_dynamics_derivatives(human, d, q, qd, tau)

    def sims(part):
        for q0 in part:
            mbsens.simulate(pend, q0=q0, tf=2.0)

    jobs = {"human43 FD derivatives": (derivs, states),
            "double pendulum simulate": (sims, [[0.1 * k, 0.2] for k in range(8)])}
    out = {}
    for name, (work, items) in jobs.items():
        t1s, t2s = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            work(items)
            t1s.append(time.perf_counter() - t0)
            halves = [items[0::2], items[1::2]]
            th = [threading.Thread(target=work, args=(h,)) for h in halves]
            t0 = time.perf_counter()
            for t in th:
                t.start()
            for t in th:
                t.join()
            t2s.append(time.perf_counter() - t0)
        out[name] = (statistics.median(t1s), statistics.median(t2s),
                     statistics.median(a / b for a, b in zip(t1s, t2s)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default=str(ROOT / "build"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--quick", action="store_true", help="3 repetitions of 0.05 s (a smoke test)")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time_ns if args.clock == "cpu" else time.perf_counter_ns
    if args.quick:
        args.reps, args.min_time = 3, 0.05
    setup_path(args.build)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy as np

    import mbsens

    print(f"# bench_python: mbsens {mbsens.__version__} from {mbsens.__file__}")
    print(f"    python {platform.python_version()} ({sys.executable}), numpy {np.__version__}")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    print(f"    machine: {cpu}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"    {args.reps} interleaved repetitions of >= {args.min_time} s per row, {args.clock} clock\n")
    c, py = [], []
    inproc = None
    for _ in range(args.reps):
        c.append(c_side(args.build, args.min_time, args.clock))
        py.append(python_side(mbsens, np, args.min_time))
        inproc = inproc or InProcessC(args.build, c[-1])
        py[-1]["inproc_ns"] = per_call_ns(inproc.run, args.min_time)
    rows = [("inverse_dynamics, out=", "id_out_ns", "id_pendulum_ns"),
            ("inverse_dynamics", "id_alloc_ns", "id_pendulum_ns"),
            ("simulate 10^4 steps", "sim_ns", "sim_pendulum_ns"),
            ("... C in this process (ctypes)", "inproc_ns", "sim_pendulum_ns")]
    print("| double pendulum | C | Python | overhead | Python / C |")
    print("|---|---|---|---|---|")
    for label, kp, kc in rows:
        cm = statistics.median(r[kc] for r in c)
        pm = statistics.median(r[kp] for r in py)
        over = statistics.median(p[kp] - q[kc] for p, q in zip(py, c))
        ratio = statistics.median(p[kp] / q[kc] for p, q in zip(py, c))
        unit, s = ("us", 1e-3) if cm < 1e6 else ("ms", 1e-6)
        print(f"| {label} | {cm * s:.3f} {unit} | {pm * s:.3f} {unit} | {over * s:+.3f} {unit} | {ratio:.3f} |")
    print("\n| threads (one Data each) | 1 thread | 2 threads | speed-up |")
    print("|---|---|---|---|")
    for name, (t1, t2, sp) in threads_speedup(mbsens, np, args.reps).items():
        print(f"| {name} | {t1 * 1e3:.1f} ms | {t2 * 1e3:.1f} ms | {sp:.2f} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
