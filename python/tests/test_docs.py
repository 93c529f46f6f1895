"""The code docs/python.md (and the README) shows runs: the python blocks, in order, in one
namespace, from the tree's root (as a reader would paste them); its shell
commands are those that tests run (the examples: test_examples.py, which
reads them from the page; installing: tests/sh/python_pip.sh)."""
import os
import re

from conftest import SRC

DOC = SRC / "docs" / "python.md"


def blocks(kind, doc=DOC):
    return re.findall(r"^```" + kind + r"\n(.*?)^```", doc.read_text(), re.S | re.M)


def run_blocks(doc):
    cwd = os.getcwd()
    os.chdir(SRC)
    try:
        ns = {"__name__": "docs_python"}
        for k, code in enumerate(blocks("python", doc)):
            exec(compile(code, f"{doc}:block{k + 1}", "exec"), ns)
    finally:
        os.chdir(cwd)
    return ns


def test_python_blocks_run(capsys):
    run_blocks(DOC)
    out = capsys.readouterr().out
    assert "broken.json:1:" in out and "q[1] (theta2) is nan" in out


def test_readme_python_block_runs():
    ns = run_blocks(SRC / "README.md")
    assert ns["sens"].gradient.shape == (3, 5)


def test_shell_commands_are_tested():
    pip_test = (SRC / "tests" / "sh" / "python_pip.sh").read_text()
    for block in blocks("sh"):
        for line in block.strip().splitlines():
            if line.startswith("/usr/bin/python3 examples/python/"):
                continue    # run by test_examples.py, as the page shows them
            cmd = line.split("#")[0].strip()
            assert cmd in pip_test, f"docs/python.md shows '{cmd}', which tests/sh/python_pip.sh does not run"
