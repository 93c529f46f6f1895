"""mbsens: recursive multibody dynamics with analytical sensitivities, for numpy.

The whole C library (include/mbsens/) from Python:

    import mbsens, numpy as np
    model = mbsens.Model.load("models/double_pendulum.json")   # JSON or URDF
    data = mbsens.Data(model)                                 # workspace, one per thread
    tau = mbsens.inverse_dynamics(model, data, q, qd, qdd)     # numpy arrays in and out
    res = mbsens.simulate(model, tf=2.0)                      # res.t, res.q, res.qd, res.qdd
    sens = mbsens.sensitivity(model, method="ddm")            # sens.psi, sens.gradient

Per-instant functions take (model, data, ...) and return numpy arrays; each
takes an optional out= (an array, or a tuple of arrays for several results,
in the order of the C function's outputs). Sizes: q has model.nq entries;
qd, qdd, tau have model.nv; derivative matrices have nv rows and nv columns
for the state (nparams for the design parameters). docs/python.md has the
whole API, the conventions and the per-call costs.

Errors of the library raise mbsens.Error subclasses carrying its message
(file:line:col or JSON path, time and cause); bad arguments (shape, dtype,
non-finite values) raise TypeError or ValueError before the library runs.
"""
from ._mbsens import (  # noqa: F401  (re-exported)
    Model, Data, Integrator,
    Error, FileError, ParseError, ModelError, ArgumentError, NumericalError, UnsupportedError,
    OutOfMemoryError, ModelWarning, STATUS, library_version,
    kinematics, inverse_dynamics, mass_matrix, bias_forces, forward_dynamics,
    inverse_dynamics_derivatives, inverse_dynamics_param_derivatives, inverse_dynamics_directional,
    forward_dynamics_derivatives, forward_dynamics_param_derivatives, forward_dynamics_directional,
    normalize_state, euler_omega_from_rates, euler_rates_from_omega,
    velocity_map, rates_from_velocity, velocity_from_rates,
    constraints, constraint_jacobian, constraint_eval, constraint_rank, constraint_violation,
    assemble, solve_velocity, solve_acceleration,
    generate_chain_json, generate_spline_body_json,
)
from ._run import (  # noqa: F401
    simulate, SimResult, sensitivity, SensResult, optimize, OptResult, OptIteration,
    check, CheckReport, objective_trace, load, generate_chain, generate_spline_body,
)

__version__ = library_version
