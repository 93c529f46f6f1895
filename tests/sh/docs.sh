#!/bin/sh
# The docs are executable: every command shown in README.md and docs/*.md
# runs and prints what the doc shows, and every JSON example loads
# (tests/sh/lib/doctest.py says how blocks are read and the markers that
# make an output illustrative or a block not run).
#
# Not run: docs/architecture.md and docs/layout-plan.md, notes of the
# layout work whose commands build and inspect a build tree (cmake,
# scripts/layers.py), docs/testing.md, whose commands are make targets
# (fuzzing, the test suite itself), and docs/python.md, whose commands
# build and install the Python package (its own tests run them); they carry
# no doctest markers yet.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=docs
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
need_python
# The docs' commands take minutes under the sanitizers (optimizations and
# simulations of the tour); the CLI's code paths are run under them by the
# other tests of tests/sh, so the docs are checked in the optimized build.
if [ "${MBS_SANITIZE:-OFF}" = ON ]; then
    ok "docs are run in the optimized build (MBS_SANITIZE=ON here)"
    finish
fi
NOT_RUN="architecture.md layout-plan.md testing.md python.md"

set -- "$MBS_SOURCE_DIR/README.md"
for f in "$MBS_SOURCE_DIR"/docs/*.md; do
    case " $NOT_RUN " in *" $(basename "$f") "*) continue ;; esac
    set -- "$@" "$f"
done
python3 "$MBS_SOURCE_DIR/tests/sh/lib/doctest.py" --cli "$CLI" --source "$MBS_SOURCE_DIR" "$@" >"$TMP/doctest.log" 2>&1
status=$?
while IFS= read -r line; do
    case $line in
        "ok: "*) ok "${line#ok: }" ;;
        "FAILED: "*) ko "${line#FAILED: }" ;;
        *) echo "$line" ;;
    esac
done <"$TMP/doctest.log"
[ "$status" -eq 0 ] || ko "doctest.py exits $status"
finish
