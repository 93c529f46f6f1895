"""The benchmark docs/benchmarks.md shows ("Python") runs: its command, with
--quick (a smoke test: the figures are not checked), prints every row."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SRC

BUILD = Path(os.environ.get("MBS_BUILD_DIR") or SRC / "build")


@pytest.mark.skipif(not (BUILD / "bench" / "bench_python_ref").exists(), reason="benchmarks not built")
def test_bench_python_quick():
    section = (SRC / "docs" / "benchmarks.md").read_text().split("## Python (`bench/bench_python.py`)")[1]
    cmd = re.search(r"^/usr/bin/python3 (bench/bench_python.py) build (.*)$", section, re.M)
    args = [sys.executable, str(SRC / cmd.group(1)), str(BUILD)] + cmd.group(2).split() + ["--quick"]
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    for row in ("inverse_dynamics, out=", "simulate 10^4 steps", "C in this process", "human43 FD derivatives"):
        assert re.search(r"^\| " + re.escape(row), r.stdout, re.M) or row in r.stdout, r.stdout
