"""The examples of examples/python/ run and print what they promise:
the five-bar gradient within 0.1 % of the thesis's Tables 7.4-7.6 (the bound
of tests/test_sensitivity_loops.c) and DDM = DAVM (the same discrete
gradient: 1e-7, the bound of tests/sh/install.sh's own objective); scipy's
optimum equal to the NLopt driver's (both stop at the optimizers' relative
tolerances, ftol 1e-10 on psi: psi agrees to 1e-8 relative, the parameters,
in a flat valley, to 1e-3); a PNG of the double pendulum; the URDF loop's
torques equal to one call each, and its step prediction at the O(dt^2) of
the central differences it uses (10x)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mbsens
from conftest import SANITIZED, SRC

EX = SRC / "examples" / "python"
# The examples are scripts of the optimized build; under the sanitizers they would only repeat, slowly,
# calls the other tests make there.
pytestmark = pytest.mark.skipif(SANITIZED, reason="the examples run in the optimized build")


def doc_commands():
    """The example commands docs/python.md shows: {script: [arguments]} (run as shown here)."""
    cmds = {}
    for line in (SRC / "docs" / "python.md").read_text().splitlines():
        if line.startswith("/usr/bin/python3 examples/python/"):
            words = line.split()
            cmds[Path(words[1]).name] = words[2:]
    return cmds


DOC = doc_commands()


def run(script, *args, cwd=None):
    """The script with the doc's arguments (or the given ones), from the tree's root (or cwd)."""
    args = [str(a) for a in args] if args else DOC[script]
    r = subprocess.run([sys.executable, str(EX / script), *args], capture_output=True, text=True,
                       cwd=cwd or SRC, env=dict(os.environ))
    assert r.returncode == 0, f"{script}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_every_example_is_shown_and_run():
    assert sorted(DOC) == sorted(p.name for p in EX.glob("*.py"))


def test_fivebar_gradient():
    out = run("fivebar_gradient.py")
    dev = float(re.search(r"largest deviation from the thesis: ([0-9.]+) %", out).group(1))
    assert dev <= 0.1
    assert float(re.search(r"largest \|ddm - davm\| / \|ddm\|: (\S+)", out).group(1)) <= 1e-7
    assert len(re.findall(r"^dpsi\d/d", out, re.M)) == 15


def test_design_optimization():
    out = run("design_optimization.py")
    psi = re.search(r"^psi\s+(\S+)\s+(\S+)\s+(\S+)", out, re.M)
    start, scipy_psi, nlopt_psi = map(float, psi.groups())
    assert scipy_psi < 0.5 * start and abs(scipy_psi - nlopt_psi) <= 1e-8 * nlopt_psi
    assert float(re.search(r"relative difference of the optima: (\S+)", out).group(1)) <= 1e-3


def test_double_pendulum_plot(tmp_path):
    png = tmp_path / DOC["double_pendulum_plot.py"][DOC["double_pendulum_plot.py"].index("-o") + 1]
    out = run("double_pendulum_plot.py", *DOC["double_pendulum_plot.py"], cwd=tmp_path)
    assert "wrote" in out and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000


def test_urdf_trajectory():
    out = run("urdf_trajectory.py")
    m = re.search(r"\|actual - predicted\| / \|actual\| = (\S+) \(O\(dt\^2\) = (\S+)\)", out)
    assert float(m.group(1)) <= 10 * float(m.group(2))
    # the largest torque of the loop is at least that of one call at the first sample
    sys.path.insert(0, str(EX))
    try:
        import urdf_trajectory
    finally:
        sys.path.pop(0)
    model = mbsens.Model.load(SRC / "tests" / "urdf" / "small_robot.urdf")
    q, qd, qdd = urdf_trajectory.trajectory(model, np.array([0.0]))     # the first sample
    tau = mbsens.inverse_dynamics(model, mbsens.Data(model), q[0], qd[0], qdd[0])
    line = [l for l in out.splitlines() if l.startswith("shoulder")][0]
    assert np.isfinite(tau).all() and float(line.split()[1]) >= abs(tau[0]) - 1e-12


@pytest.mark.skipif(not (SRC.parent / "shared" / "data" / "example-robot-data").is_dir() and
                    not os.environ.get("MBS_URDF_DIR"), reason="example-robot-data not present")
def test_urdf_trajectory_robot():
    d = os.environ.get("MBS_URDF_DIR") or str(SRC.parent / "shared" / "data" / "example-robot-data")
    out = run("urdf_trajectory.py", os.path.join(d, "panda.urdf"), "--samples", "100")
    assert out.startswith("panda:")
