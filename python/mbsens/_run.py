"""Calls over whole simulations (simulate, sensitivity, optimize), the
derivative check, and the model generators: keyword options in, result
objects out. The work is done by the extension without the GIL; the
callbacks given here are called with it.

Options are the keywords of docs/python.md ("Options"): the members of the
library's option structs under their C names (dt, tf, integrator, ref, ...),
plus formulation = 'fr' | 'semi' | 'ali3p' | 'matrixr' | 'penalty' |
'index1' as on the command line. An unknown keyword raises TypeError.
"""
from collections import namedtuple
from types import SimpleNamespace

import numpy as np

from . import _mbsens
from ._mbsens import Data, Model

__all__ = ["load", "simulate", "SimResult", "sensitivity", "SensResult", "optimize", "OptResult",
           "OptIteration", "check", "CheckReport", "objective_trace", "generate_chain",
           "generate_spline_body"]


def load(path, **urdf_options):
    """Model.load(path, **urdf_options): a JSON model, or a URDF (name ending in .urdf)."""
    return Model.load(path, **urdf_options)


def _check_model(model, func):
    if not isinstance(model, Model):
        raise TypeError(f"{func}(): model must be an mbsens.Model, not {type(model).__name__}")


def _dofs(model, dofs):
    """Matrix R's independent coordinates: names or indices of coordinates, or
    (point, component) pairs with the point's name or index and 'x'/'y'/'z' or 0..2."""
    if dofs is None:
        return None
    out = []
    for d in dofs:
        if isinstance(d, tuple):
            if len(d) != 2:
                raise ValueError(f"dofs: expected (point, component), got {d!r}")
            p, c = d
            p = model.point_index(p) if isinstance(p, str) else p
            c = "xyz".index(c) if isinstance(c, str) and c in ("x", "y", "z") else c
            out.append((p, c))
        else:
            out.append(model.coord_index(d) if isinstance(d, str) else d)
    return out


def _sim_options(model, options):
    if "dofs" in options:
        options = dict(options, dofs=_dofs(model, options["dofs"]))
    return options


# ---------------------------------------------------------------- simulate

class SimResult:
    """A trajectory: t (n,), q (n, nq), qd and qdd (n, nv), outputs (n, len(output_names)),
    violation (n, 3) for closed-loop formulations (|Phi|, |dPhi/dt|, |d2Phi/dt2|) else None,
    stats (the step statistics), options (those used), stopped (the progress callback
    returned False)."""

    def __init__(self, model, raw):
        self.t = raw["t"]
        self.q = raw["q"]
        self.qd = raw["qd"]
        self.qdd = raw["qdd"]
        self.outputs = raw["outputs"]
        self.violation = raw["violation"]
        self.stats = SimpleNamespace(**raw["stats"])
        self.options = raw["options"]
        self.stopped = raw["stopped"]
        self.coord_names = model.coord_names
        self.velocity_names = model.velocity_names
        self.output_names = model.output_names

    def column(self, name):
        """One column by name: a coordinate ('theta1'), its rate or acceleration
        ('theta1.qd', 'theta1.qdd'), or an output column ('link2.tip.x', 'energy')."""
        if name in self.output_names:
            return self.outputs[:, self.output_names.index(name)]
        for suffix, arr, names in ((".qdd", self.qdd, self.velocity_names),
                                   (".qd", self.qd, self.velocity_names)):
            if name.endswith(suffix) and name[:-len(suffix)] in names:
                return arr[:, names.index(name[:-len(suffix)])]
        if name in self.coord_names:
            return self.q[:, self.coord_names.index(name)]
        raise KeyError(f"no column named {name!r}")

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return (f"<SimResult: {len(self.t)} rows, t = {self.t[0]:g} .. {self.t[-1]:g}, "
                f"{self.stats.steps} steps{', stopped' if self.stopped else ''}>")


def simulate(model, q0=None, qd0=None, *, data=None, progress=None, **options):
    """Integrate the equations of motion from t0 to tf (the model's simulation
    section, overridden by the keyword options) from (q0, qd0) (None: the
    model's initial state). Returns a SimResult with a row at t0 and after
    every step. progress(t, q, qd), if given, is called after every step
    (with the GIL; return False to stop). The GIL is released while the
    integrator runs; `data` (a Data of the model, made if None) must not be
    used by another thread meanwhile."""
    _check_model(model, "simulate")
    if data is None:
        data = Data(model)
    raw = _mbsens._simulate(model, data, _sim_options(model, options), q0, qd0, progress)
    return SimResult(model, raw)


# ---------------------------------------------------------------- sensitivity

class SensResult:
    """Objectives psi (nobj,) and their gradient (nobj, nparams) with respect to the
    design parameters, with the names of both, the simulation statistics, the wall
    time and the options used (with 'method')."""

    def __init__(self, raw, objective_names, param_names):
        self.psi = raw["psi"]
        self.gradient = raw["gradient"]
        self.objective_names = tuple(objective_names)
        self.param_names = tuple(param_names)
        self.stats = SimpleNamespace(**raw["stats"])
        self.wall_seconds = raw["wall_seconds"]
        self.options = raw["options"]
        self.method = raw["options"]["method"]
        self.formulation = raw["options"]["formulation"]

    def as_dict(self):
        """{objective: {"psi": value, parameter: dpsi/dparameter, ...}}"""
        return {o: dict({"psi": float(self.psi[i])},
                        **{p: float(self.gradient[i, j]) for j, p in enumerate(self.param_names)})
                for i, o in enumerate(self.objective_names)}

    def __repr__(self):
        head = f"{'objective':<10} {'psi':>15}" + "".join(f" {p:>15}" for p in self.param_names)
        rows = [f"{o:<10} {self.psi[i]: 15.8e}" + "".join(f" {g: 15.8e}" for g in self.gradient[i])
                for i, o in enumerate(self.objective_names)]
        return "\n".join([f"<SensResult: {self.method}, {self.formulation}, {self.wall_seconds:.3f} s>", head]
                         + rows)


def sensitivity(model, *, method="ddm", objective=None, history=None, **options):
    """psi and dpsi/drho of the model's objectives over a simulation, by `method`:
    'ddm' (direct differentiation), 'davm' (discrete adjoint), 'cavm' (continuous
    adjoint), 'fd' (central differences), 'cs' (complex step). Options as simulate's
    plus fd_step; formulation defaults to 'semi' for open trees (the model's loop
    formulation for closed loops), as on the command line.

    objective(t, q, qd, qdd, rho, grad), if given, adds a program's own objective
    psi = integral of g over the run (named after the function): it returns g, and
    when grad is True the tuple (g, g_q, g_qd, g_qdd, g_rho) of partial derivatives.
    history(t, psi, grad) is called at t0 and after every step with the running
    values (grad: ddm only, else None); what it returns is ignored. Both are called
    with the GIL; an exception they raise stops the analysis and is raised here."""
    _check_model(model, "sensitivity")
    opts = dict(_sim_options(model, options), method=method)
    raw = _mbsens._sensitivity(model, opts, objective, history)
    names = list(model.objective_names)
    if objective is not None:
        names.append(getattr(objective, "__name__", "objective"))
    return SensResult(raw, names, model.param_names)


# ---------------------------------------------------------------- optimize

OptIteration = namedtuple("OptIteration", "iteration evaluations stage tf psi gnorm step x grad")
OptIteration.__doc__ = ("One accepted point of optimize(): iteration (0: the start of a stage), evaluations so "
                        "far, continuation stage and its final time tf, the weighted objective psi, the 2-norm "
                        "of its projected gradient gnorm, the step of the scaled variables, the parameter "
                        "values x and the gradient grad.")


class OptResult:
    """The result of optimize(): x0 and x (parameter values, start and best), grad at x,
    psi_initial, psi_final, the projected-gradient norms, iterations, evaluations,
    failed_evaluations, stages, stop_reason, nlopt_code, method, wall_seconds, the
    messages about failed evaluations, param_names, and model (the model with x)."""

    def __init__(self, model, raw, messages):
        for k, v in raw.items():
            setattr(self, k, v)
        self.messages = messages
        self.param_names = model.param_names
        self.model = model.with_params(self.x)

    def __repr__(self):
        return (f"<OptResult: psi {self.psi_initial:.6g} -> {self.psi_final:.6g}, {self.iterations} iterations, "
                f"{self.evaluations} evaluations, stop: {self.stop_reason}>")


def _weights(model, weights):
    """One weight per objective, from {name or index: weight} (the others 0) or a sequence."""
    if not isinstance(weights, dict):
        return weights
    w = np.zeros(model.nobjectives)
    for k, v in weights.items():
        w[model.objective_index(k) if isinstance(k, str) else k] = v
    return w


def _param_flags(model, names):
    flags = np.zeros(model.nparams)
    for n in names:
        flags[model.param_index(n) if isinstance(n, str) else n] = 1
    return flags


def optimize(model, *, objective=None, weights=None, fixed=None, free=None, method=None, callback=None,
             message=None, **options):
    """Minimize one of the model's objectives (name or index; default the first) or a
    weighted sum (weights: {name: w} or one per objective) over the design parameters
    with NLopt (algorithm='lbfgs' | 'slsqp' | 'mma') and sensitivity gradients (method
    None: chosen as the command line does). fixed / free name the parameters held at
    their values or the only ones that move. callback(it) gets an OptIteration at every
    accepted point (return False to stop); message(text) each line about a failed
    evaluation (also kept in result.messages). Options: simulate's plus max_iter,
    max_eval, xtol, ftol, pgtol, scaling, lbfgs_memory, max_failures, continuation,
    continuation_start, continuation_step, fd_step."""
    _check_model(model, "optimize")
    opts = dict(_sim_options(model, options), method=method)
    if objective is not None:
        opts["objective"] = model.objective_index(objective) if isinstance(objective, str) else objective
    if weights is not None:
        opts["weights"] = _weights(model, weights)
    if fixed is not None and free is not None:
        raise ValueError("optimize: give fixed or free, not both")
    if fixed is not None:
        opts["fixed"] = _param_flags(model, fixed)
    if free is not None:
        opts["fixed"] = 1 - _param_flags(model, free)
    messages = []

    def on_message(text):
        messages.append(text)
        if message is not None:
            message(text)

    def on_iteration(d):
        return callback(OptIteration(**d))

    raw = _mbsens._optimize(model, opts, on_iteration if callback is not None else None, on_message)
    return OptResult(model, raw, messages)


def objective_trace(model, objective=None, weights=None, **options):
    """(t, g, psi) along a simulation: the (weighted) integrand of the model's objectives
    and its running integral (terminal terms added at the end only)."""
    _check_model(model, "objective_trace")
    if isinstance(objective, str):
        objective = model.objective_index(objective)
    return _mbsens._objective_trace(model, _sim_options(model, options), objective,
                                    None if weights is None else _weights(model, weights))


# ---------------------------------------------------------------- check, generators

class CheckReport:
    """The worst relative error of every analytical derivative block against complex
    step (worst: {block: error}) over `samples` states, with the tolerance derived
    from round-off and the condition number of M (tolerance: {block: its largest
    value}; ratio: {block: the largest error / tolerance of one state}; cond: the
    largest condition number of M completed for the Euler parameters)."""

    def __init__(self, samples, worst, tolerance, ratio, cond):
        self.samples = samples
        self.worst = worst
        self.tolerance = tolerance
        self.ratio = ratio
        self.cond = cond

    def passed(self, tol=None):
        """True if every block is within its derived tolerance at every state (tol
        None, as the command line's default), within tol (a number), or within
        tol[block] (a dict, as the command line's JSON "tolerance")."""
        if tol is None:
            return all(v <= 1 for v in self.ratio.values())
        if isinstance(tol, dict):
            return all(v <= tol[k] for k, v in self.worst.items())
        return all(v <= tol for v in self.worst.values())

    def __repr__(self):
        return f"<CheckReport: {self.samples} samples, worst {max(self.worst.values()):.3e}>"


def check(model, samples=10, seed=1, ref="com", q=None, qd=None):
    """Every analytical derivative against complex step at `samples` random states
    (or at (q, qd)), as `mbsens check`."""
    return CheckReport(*_mbsens._check(model, samples, seed, ref, q, qd))


def generate_chain(n, joint="revolute", floating_base=False):
    """A spatial serial chain of n links (revolute, cardan or spherical joints), as
    `mbsens generate chain`."""
    return Model.from_string(_mbsens.generate_chain_json(n, joint, floating_base),
                             name=f"chain{n}_{joint}{'_floating' if floating_base else ''}")


def generate_spline_body(nknots, tf=1.0):
    """The parameter-count sweep model: a floating body pushed along a spline of nknots knots."""
    return Model.from_string(_mbsens.generate_spline_body_json(nknots, tf), name=f"spline_body{nknots}")
