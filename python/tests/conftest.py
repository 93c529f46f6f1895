"""What the tests of the mbsens Python package share: where the sources, the
command-line tool and the C reference helper are (CTest sets MBS_SOURCE_DIR,
MBS_CLI, MBS_PYREF; without them the repository and build/ are assumed), the
shipped models, and random states."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mbsens

SRC = Path(os.environ.get("MBS_SOURCE_DIR") or Path(__file__).resolve().parents[2])
CLI = Path(os.environ.get("MBS_CLI") or SRC / "build" / "mbsens")
PYREF = Path(os.environ.get("MBS_PYREF") or SRC / "build" / "python" / "mbs_pyref")
SANITIZED = os.environ.get("MBS_SANITIZE", "OFF").upper() in ("ON", "1", "TRUE", "YES")


def shipped_models():
    """Every model the repository ships that loads: models/, tests/models/ and the small URDF robot."""
    paths = sorted((SRC / "models").glob("*.json")) + sorted((SRC / "tests" / "models").glob("*.json"))
    paths = [p for p in paths if not p.name.startswith("bad_")]
    return paths + [SRC / "tests" / "urdf" / "small_robot.urdf"]


def model_id(path):
    return path.name


def random_state(model, rng, scale=0.3):
    """A state near the model's initial one: q (Euler parameters normalized, their
    rates orthogonal to them), qd, qdd, tau, and directions of every argument."""
    q = model.q0 + scale * rng.standard_normal(model.nq)
    qd = rng.standard_normal(model.nv)
    q, qd = mbsens.normalize_state(model, q, qd)
    s = {"t": float(rng.uniform(0, 1)), "q": q, "qd": qd}
    for k in ("qdd", "tau", "dq", "dqd", "dqdd", "dtau"):
        s[k] = rng.standard_normal(model.nv)
    s["drho"] = rng.standard_normal(model.nparams)
    return s


def run_cli(*args, check=True):
    """The command-line tool; returns its standard output."""
    r = subprocess.run([str(CLI)] + [str(a) for a in args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"mbsens {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def run_cli_json(*args):
    return json.loads(run_cli(*args))


@pytest.fixture
def pendulum():
    return mbsens.Model.load(SRC / "models" / "double_pendulum.json")
