"""The PEP 517 build backend of the mbsens Python package, in the tree and
using the standard library only (pyproject.toml: requires = []), so that

    pip install ./python

works offline: pip's isolated build environment needs nothing from an
index. The wheel is built by CMake from the repository this directory
belongs to: the static C library and the extension module mbsens._mbsens
(python/CMakeLists.txt), for the interpreter that runs pip, with its numpy
(Debian's python3-numpy, also inside a venv made with
--system-site-packages). The wheel holds the package and the extension;
the extension links the library statically and its Debian dependencies
(jansson, LAPACKE/OpenBLAS, SUNDIALS, NLopt, libxml2) dynamically.

config_settings (pip --config-settings KEY=VALUE):
    build-dir   CMake build directory to use and keep (default: a temporary one)
    jobs        parallel build jobs (default: CMAKE_BUILD_PARALLEL_LEVEL, else 2)

Only wheels are built: the package builds from the repository (no sdist).
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

NAME = "mbsens"
SUMMARY = "Recursive multibody dynamics with analytical sensitivities (numpy bindings of the C library)"
REQUIRES_PYTHON = ">=3.10"
REQUIRES = ["numpy"]

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
REPO = PYTHON_DIR.parent

__all__ = ["get_requires_for_build_wheel", "build_wheel"]


def get_requires_for_build_wheel(config_settings=None):
    """Nothing: the build uses CMake and the interpreter's own numpy."""
    return []


def _version():
    text = (REPO / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*mbsens\s+VERSION\s+([0-9.]+)", text)
    if not m:
        raise RuntimeError(f"mbsens build: no project version in {REPO / 'CMakeLists.txt'}")
    return m.group(1)


def _tag():
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    if sys.implementation.name != "cpython":
        raise RuntimeError("mbsens build: the extension module is for CPython")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}-{plat}"


def _environment():
    """The build's environment without what pip's build isolation sets to hide
    the interpreter's packages: CMake must see its numpy."""
    env = dict(os.environ)
    for k in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME"):
        env.pop(k, None)
    return env


def _run(cmd, env):
    print("mbsens build: $ " + " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in cmd], check=True, env=env, stdout=sys.stderr)


def _cmake_build(build_dir, jobs):
    if not (REPO / "CMakeLists.txt").is_file() or not (REPO / "include" / "mbsens" / "mbsens.h").is_file():
        raise RuntimeError(f"mbsens build: {PYTHON_DIR} must be the python/ directory of the mbsens repository")
    if shutil.which("cmake") is None:
        raise RuntimeError("mbsens build: cmake not found (run scripts/install-deps.sh)")
    env = _environment()
    _run(["cmake", "-S", REPO, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DMBS_BUILD_TESTS=OFF",
          "-DMBS_BUILD_BENCH=OFF", "-DMBS_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
          f"-DMBS_PYTHON_DIR={Path(build_dir) / 'python'}"], env)
    _run(["cmake", "--build", build_dir, "--target", "mbsens_python", "-j", str(jobs)], env)
    return Path(build_dir) / "python" / NAME


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(path, package_dir, version, tag):
    dist_info = f"{NAME}-{version}.dist-info"
    files = {}
    for f in sorted(package_dir.iterdir()):
        if f.suffix == ".py" or (f.name.startswith("_mbsens.") and f.suffix == ".so"):
            files[f"{NAME}/{f.name}"] = f.read_bytes()
    if not any(k.endswith(".so") for k in files):
        raise RuntimeError(f"mbsens build: no extension module in {package_dir}")
    metadata = [f"Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}", f"Summary: {SUMMARY}",
                f"Requires-Python: {REQUIRES_PYTHON}"] + [f"Requires-Dist: {r}" for r in REQUIRES]
    files[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: mbsens_build\nRoot-Is-Purelib: false\n"
                                   f"Tag: {tag}\n").encode()
    files[f"{dist_info}/top_level.txt"] = f"{NAME}\n".encode()
    record = [_record_line(k, v) for k, v in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in files.items():
            z.writestr(k, v)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Build the library and the extension with CMake and pack the wheel."""
    config_settings = config_settings or {}
    jobs = config_settings.get("jobs") or os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or 2
    keep = config_settings.get("build-dir")
    build_dir = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix="mbsens-wheel-"))
    try:
        package_dir = _cmake_build(build_dir, jobs)
        version, tag = _version(), _tag()
        name = f"{NAME}-{version}-{tag}.whl"
        _write_wheel(Path(wheel_directory) / name, package_dir, version, tag)
        return name
    finally:
        if not keep:
            shutil.rmtree(build_dir, ignore_errors=True)
