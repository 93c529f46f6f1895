"""A trajectory of the double pendulum plotted to PNG with matplotlib: the
joint angles, the path of the tip, and the mechanical energy (whose drift
shows the integrator's accuracy).

    python3 examples/python/double_pendulum_plot.py [-o double_pendulum.png] [--tf 10]
"""
import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")      # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import mbsens  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="double_pendulum.png", help="PNG file to write")
    ap.add_argument("--tf", type=float, default=10.0, help="final time (default 10 s)")
    args = ap.parse_args()

    model = mbsens.Model.load(ROOT / "models" / "double_pendulum.json")
    data = mbsens.Data(model)
    res = mbsens.simulate(model, q0=[2.0, 0.5], tf=args.tf, dt=1e-3, data=data)

    # the tip (the last named point of body2) and the energy at every row
    tip = model.point_names[-1]
    path = np.empty((len(res.t), 3))
    energy = np.empty(len(res.t))
    for i in range(len(res.t)):
        mbsens.kinematics(model, data, res.q[i], res.qd[i])
        path[i] = data.point(tip)[0]
        energy[i] = data.kinetic_energy() + data.potential_energy()

    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    for k, name in enumerate(model.coord_names):
        ax[0].plot(res.t, res.q[:, k], label=name)
    ax[0].set(xlabel="t (s)", ylabel="angle (rad)", title="joint angles")
    ax[0].legend()
    ax[1].plot(path[:, 0], path[:, 1], lw=0.6)
    ax[1].set(xlabel="x (m)", ylabel="y (m)", title=f"path of {tip}", aspect="equal")
    ax[2].plot(res.t, energy - energy[0])
    ax[2].set(xlabel="t (s)", ylabel="E - E0 (J)", title="energy error (trapezoidal rule, 1 ms)")
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    print(f"{len(res.t)} rows, {res.stats.steps} steps, energy drift {res.stats.energy_drift:.2e} J "
          f"(E0 = {res.stats.energy0:.6g} J): wrote {args.output}")


if __name__ == "__main__":
    main()
