"""Suspension design with scipy.optimize.minimize and mbsens gradients, beside
the library's own NLopt driver (mbsens.optimize).

The half vehicle of models/halfcar_step.json drives over a 1 cm step; the
objective `ride` weighs the seat's vertical acceleration and the suspension
travel; the design parameters are the front and rear stiffness and damping
(docs/optimization.md, "Suspension design"). scipy's L-BFGS-B sees the
parameters scaled by their start values and psi by its start value, as the
built-in driver does; each evaluation is one mbsens.sensitivity run (the
discrete adjoint: psi and its whole gradient at once).

    python3 examples/python/design_optimization.py [--tf 3]
"""
import argparse
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import mbsens

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tf", type=float, default=3.0, help="final time of each simulation (default 3 s)")
    args = ap.parse_args()

    model = mbsens.Model.load(ROOT / "models" / "halfcar_step.json")
    rho0, k = model.param_values, model.objective_index("ride")
    opts = dict(method="davm", formulation="semi", tf=args.tf)
    psi0 = mbsens.sensitivity(model, **opts).psi[k]
    evaluations = 0

    def objective(u):
        """psi/psi0 and its gradient in the scaled variables u = rho / rho0."""
        nonlocal evaluations
        evaluations += 1
        s = mbsens.sensitivity(model.with_params(u * rho0), **opts)
        return s.psi[k] / psi0, s.gradient[k] * rho0 / psi0

    t0 = time.perf_counter()
    bounds = list(zip(model.param_lower / rho0, model.param_upper / rho0))
    res = minimize(objective, np.ones(model.nparams), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"ftol": 1e-10, "gtol": 1e-8})
    t_scipy = time.perf_counter() - t0
    x_scipy = res.x * rho0

    t0 = time.perf_counter()
    nl = mbsens.optimize(model, objective="ride", **opts)
    t_nlopt = time.perf_counter() - t0

    print(f"half vehicle over a step, {args.tf:g} s: minimize ride = integral(zdd_seat^2 + 1e4 travel^2)")
    print(f"{'parameter':<10} {'start':>12} {'scipy L-BFGS-B':>15} {'NLopt L-BFGS':>15}")
    for j, p in enumerate(model.param_names):
        print(f"{p:<10} {rho0[j]:12.6g} {x_scipy[j]:15.6f} {nl.x[j]:15.6f}")
    psi_scipy = mbsens.sensitivity(model.with_params(x_scipy), **opts).psi[k]
    print(f"{'psi':<10} {psi0:12.6g} {psi_scipy:15.9f} {nl.psi_final:15.9f}")
    print(f"{'evals':<10} {'':12} {evaluations:15d} {nl.evaluations:15d}")
    print(f"{'seconds':<10} {'':12} {t_scipy:15.1f} {t_nlopt:15.1f}")
    print(f"scipy: {res.message}; NLopt: {nl.stop_reason}")
    print(f"relative difference of the optima: {np.max(np.abs(x_scipy - nl.x) / np.abs(nl.x)):.1e}")


if __name__ == "__main__":
    main()
