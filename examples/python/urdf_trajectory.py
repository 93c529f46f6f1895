"""A URDF robot's inverse dynamics and its derivatives along a trajectory, in a
loop that allocates nothing: every result is written with out= into a row of
arrays made once (torques (N, nv), dtau/dq and dtau/dqd (N, nv, nv)).

The trajectory moves every joint coordinate sinusoidally inside its URDF
limits (Euler parameters of floating joints are held). Any URDF works, e.g.
the robots of example-robot-data; the default is a small robot of the tests.

    python3 examples/python/urdf_trajectory.py [ROBOT.urdf] [--samples 1000]
"""
import argparse
import time
from pathlib import Path

import numpy as np

import mbsens

ROOT = Path(__file__).resolve().parents[2]


def trajectory(model, t):
    """q (N, nq), qd and qdd (N, nv): a sine per coordinate, of 1/4 of its range."""
    lo, hi = model.joint_limits[:, 0], model.joint_limits[:, 1]
    mid, amp = model.q0.copy(), np.full(model.nq, 0.3)
    for j, (off, n) in enumerate(zip(model.joint_coord_offsets, model.joint_nq)):
        if np.isfinite(lo[j]) and np.isfinite(hi[j]) and n == 1:
            mid[off], amp[off] = 0.5 * (lo[j] + hi[j]), 0.25 * (hi[j] - lo[j])
    moving = np.array([not name.rsplit(".", 1)[-1] in ("e0", "e1", "e2", "e3") for name in model.coord_names])
    amp[~moving] = 0.0
    w = 2 * np.pi * (0.5 + 0.1 * np.arange(model.nq))      # a different frequency per coordinate
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    return mid + amp * s, amp * w * c, -amp * w**2 * s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urdf", nargs="?", default=str(ROOT / "tests" / "urdf" / "small_robot.urdf"))
    ap.add_argument("--samples", type=int, default=1000, help="points of the trajectory over 2 s")
    ap.add_argument("--floating-base", action="store_true", help="the root link on a floating joint")
    args = ap.parse_args()

    model = mbsens.Model.load(args.urdf, floating_base=args.floating_base)
    data = mbsens.Data(model)
    t = np.linspace(0.0, 2.0, args.samples)
    q, qd, qdd = trajectory(model, t)
    n, nv = len(t), model.nv
    tau, dtau_dq, dtau_dqd = np.empty((n, nv)), np.empty((n, nv, nv)), np.empty((n, nv, nv))

    start = time.perf_counter()
    for i in range(n):
        mbsens.inverse_dynamics_derivatives(model, data, q[i], qd[i], qdd[i], out=(tau[i], dtau_dq[i], dtau_dqd[i]))
    per_sample = (time.perf_counter() - start) / n

    print(f"{model.name}: {model.nbodies} bodies, nq = {model.nq}, nv = {nv}; {n} samples over 2 s, "
          f"{1e6 * per_sample:.1f} us per sample (tau, dtau/dq, dtau/dqd)")
    print(f"{'coordinate':<24} {'max |tau|':>12} {'max |dtau/dq|':>14} {'max |dtau/dqd|':>15}")
    for k, name in enumerate(model.velocity_names):
        print(f"{name:<24} {np.max(np.abs(tau[:, k])):12.5g} {np.max(np.abs(dtau_dq[:, k, :])):14.5g} "
              f"{np.max(np.abs(dtau_dqd[:, k, :])):15.5g}")
    # the derivatives say how tau changes along the trajectory: tau(t + dt) - tau(t) ~ K qd dt + C qdd dt
    # + M dqdd, compared here at the middle sample with central differences in time
    i, dt = n // 2, t[1] - t[0]
    M = mbsens.mass_matrix(model, data, q[i])
    dqdd = (qdd[i + 1] - qdd[i - 1]) / 2
    predicted = dtau_dq[i] @ qd[i] * dt + dtau_dqd[i] @ qdd[i] * dt + M @ dqdd
    actual = (tau[i + 1] - tau[i - 1]) / 2
    print(f"tau step at t = {t[i]:.3f} s: |actual - predicted| / |actual| = "
          f"{np.linalg.norm(actual - predicted) / np.linalg.norm(actual):.1e} (O(dt^2) = {dt ** 2:.1e})")


if __name__ == "__main__":
    main()
