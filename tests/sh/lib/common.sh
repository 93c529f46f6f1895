# tests/sh/lib/common.sh - what every shell test shares; sourced, never run.
#
# Set SUITE (the name in the summary line) before sourcing. Environment (set
# by CTest): MBS_SOURCE_DIR, and MBS_CLI (the mbsens executable) unless the
# test sets NO_CLI=1.
#
# Gives:
#   CLI, TMP (a private directory, removed on exit), OUT and ERR (files in it)
#   ok LABEL / ko LABEL      count a check that passed / failed
#   finish                   print "SUITE: N passed, M failed" and exit,
#                            non-zero if anything failed or nothing passed
#   run ARGS...              mbsens ARGS: stdout -> $OUT, stderr -> $ERR,
#                            status -> $rc; a sanitizer report is a failure
#   expect N LABEL           the last run exited with N
#   stderr_has RE LABEL, stdout_has RE LABEL, stdout_empty LABEL
#   need_python              python3 must be there (the checks of numbers use it)
set -u

: "${SUITE:?SUITE not set}"
: "${MBS_SOURCE_DIR:?MBS_SOURCE_DIR not set}"
if [ "${NO_CLI:-0}" != 1 ]; then
    : "${MBS_CLI:?MBS_CLI not set}"
fi
CLI=${MBS_CLI:-}

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
ko() { fail=$((fail + 1)); echo "FAILED: $*"; }
finish() {
    echo "$SUITE: $pass passed, $fail failed"
    [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
    exit $?
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mbsens-$SUITE.XXXXXX") || { ko "mktemp"; finish; }
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/stdout
ERR=$TMP/stderr

need_python() {
    command -v python3 >/dev/null 2>&1 || { ko "python3 is required"; finish; }
}

run() {
    "$CLI" "$@" >"$OUT" 2>"$ERR"
    rc=$?
    if grep -q -e 'Sanitizer' -e 'runtime error' "$ERR"; then
        ko "sanitizer report for: mbsens $*"
        sed 's/^/    /' "$ERR" | head -n 40
    fi
}
expect() {
    if [ "$rc" -eq "$1" ]; then ok "$2 (exit $rc)"; else
        ko "$2: exit $rc, expected $1"; sed 's/^/    stderr: /' "$ERR" | head -n 20; fi
}
stderr_has() {
    if grep -E -q -e "$1" "$ERR"; then ok "$2"; else
        ko "$2: stderr does not match /$1/"; sed 's/^/    stderr: /' "$ERR" | head -n 20; fi
}
stdout_has() {
    if grep -E -q -e "$1" "$OUT"; then ok "$2"; else
        ko "$2: stdout does not match /$1/"; head -n 20 "$OUT" | sed 's/^/    stdout: /'; fi
}
stdout_empty() {
    if [ ! -s "$OUT" ]; then ok "$1: nothing on stdout"; else
        ko "$1: unexpected output on stdout"; head -n 5 "$OUT" | sed 's/^/    stdout: /'; fi
}
