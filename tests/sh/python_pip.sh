#!/bin/sh
# Python package test: from a clean copy of the tree (the files git tracks or
# would track, nothing built), the commands of docs/python.md "Installing":
#   make python                          the extension in place, importable
#                                        with PYTHONPATH=python
#   a venv with --system-site-packages and `pip install ./python`, offline:
#   PIP_INDEX_URL points at a closed port, so any download would fail; pip's
#   isolated build must need nothing (python/pyproject.toml: requires = []).
# The installed package must give the build tree's results bit for bit
# (inverse dynamics of the 43-body human at its initial state).
#
# Skipped (77) in the sanitizer build: an instrumented extension cannot load
# in an uninstrumented interpreter without preloading the runtime, which is
# what the sanitizer run of the pytest suite does; this test checks packaging.
#
# Environment (set by CTest): MBS_SOURCE_DIR, MBS_BUILD_DIR, MBS_SANITIZE.
SUITE=python_pip NO_CLI=1
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
: "${MBS_BUILD_DIR:?MBS_BUILD_DIR not set}"
case $(echo "${MBS_SANITIZE:-OFF}" | tr '[:upper:]' '[:lower:]') in
    on|1|true|yes|y) echo "python_pip: skipped in the sanitizer build"; exit 77 ;;
esac
PY=/usr/bin/python3
COPY=$TMP/mbsens

# ---------------------------------------------------------------- a clean copy
mkdir -p "$COPY"
if git -C "$MBS_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$MBS_SOURCE_DIR" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
        tar --null -T - -cf -) | tar -xf - -C "$COPY"
else
    (cd "$MBS_SOURCE_DIR" && tar --exclude='./build*' --exclude='./.venv' -cf - .) | tar -xf - -C "$COPY"
fi
if [ -f "$COPY/python/pyproject.toml" ] && [ ! -e "$COPY/build" ]; then ok "clean copy in $COPY"; else
    ko "clean copy"; finish; fi

# ---------------------------------------------------------------- make python
cd "$COPY" || finish
if make python JOBS=2 >"$TMP/make.log" 2>&1; then ok "make python"; else
    tail -n 30 "$TMP/make.log"; ko "make python"; finish; fi
if PYTHONPATH=python /usr/bin/python3 -c "import mbsens; print(mbsens.__version__)" >"$OUT" 2>"$ERR" &&
    grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' "$OUT"; then
    ok "in place: PYTHONPATH=python imports mbsens $(cat "$OUT")"
else
    cat "$ERR"; ko "in place: import with PYTHONPATH=python"
fi

# ---------------------------------------------------------------- pip, offline
export PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_RETRIES=0 PIP_TIMEOUT=5 PIP_NO_CACHE_DIR=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
if /usr/bin/python3 -m venv --system-site-packages .venv >"$TMP/venv.log" 2>&1; then ok "venv"; else
    cat "$TMP/venv.log"; ko "venv"; finish; fi
if .venv/bin/pip install ./python >"$TMP/pip.log" 2>&1; then ok "pip install ./python (offline)"; else
    tail -n 40 "$TMP/pip.log"; ko "pip install ./python (offline)"; finish; fi
if .venv/bin/python -c "import mbsens; print(mbsens.generate_chain(4))" >"$OUT" 2>"$ERR" &&
    grep -q "mbsens.Model 'chain_revolute_4'" "$OUT"; then
    ok "the installed package runs"
else
    cat "$OUT" "$ERR"; ko "the installed package runs"
fi

# the installed package (outside the tree) against the build tree's
cd "$TMP" || finish
cat >"$TMP/id.py" <<EOF
import sys, mbsens
m = mbsens.Model.load("$MBS_SOURCE_DIR/models/human43.json")
tau = mbsens.inverse_dynamics(m, mbsens.Data(m), m.q0, m.qd0, 0 * m.qd0)
print(mbsens.__file__)
print(" ".join(repr(float(x)) for x in tau))
EOF
"$COPY/.venv/bin/python" "$TMP/id.py" >"$TMP/venv.out" 2>&1
PYTHONPATH=$MBS_BUILD_DIR/python $PY "$TMP/id.py" >"$TMP/build.out" 2>&1
case $(head -n 1 "$TMP/venv.out") in
    "$COPY/.venv/"*) ok "imported from the venv: $(head -n 1 "$TMP/venv.out")" ;;
    *) cat "$TMP/venv.out"; ko "the venv's python did not import the installed package" ;;
esac
if [ -s "$TMP/build.out" ] && [ "$(sed -n 2p "$TMP/venv.out")" = "$(sed -n 2p "$TMP/build.out")" ]; then
    ok "installed package = build tree, bit for bit (human43 inverse dynamics)"
else
    cat "$TMP/venv.out" "$TMP/build.out"; ko "installed package and build tree differ"
fi
finish
