#!/bin/sh
# Progress on a terminal (docs/cli.md, "sensitivity" and "simulate"): the
# time reached and, for sensitivity, the time left, on standard error when
# it is a terminal (here the pseudo-terminal of script(1)), once
# $MBS_PROGRESS_DELAY seconds have passed (0 here: at the first step; 2 by
# default) and then every 0.2 s; never with -q, never when standard error
# is not a terminal; the line is erased at the end. The time left needs a
# second line: that run lasts over 2 s here, 10 times the interval.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=progress
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
TREE=$MBS_SOURCE_DIR/tests/models/spring_tree.json
command -v script >/dev/null 2>&1 || { ko "script(1) is required (bsdutils)"; finish; }

on_tty() {   # on_tty ARGS...: mbsens ARGS on a pseudo-terminal, its output in $OUT
    MBS_PROGRESS_DELAY=0 script -qec "$(printf '%s ' "$CLI" "$@")" /dev/null >"$OUT" 2>&1 </dev/null
    rc=$?
}

on_tty sensitivity "$TREE" --method ddm --tf 20
expect 0 "sensitivity on a terminal"
if grep -a -q 'mbsens sensitivity: t = [0-9.e-]* *of 20 ( *[0-9]*%), [0-9.]* s left' "$OUT"; then ok "time reached and time left"; else
    ko "no progress line"; tr '\r' '\n' <"$OUT" | head -n 5; fi
if grep -a -q "$(printf '\033\\[K')model spring_tree" "$OUT"; then ok "progress line erased before the table"; else ko "progress line not erased"; fi
on_tty sensitivity "$TREE" --method davm --tf 4
if grep -a -q '(forward pass)' "$OUT"; then ok "davm: the forward pass"; else ko "davm: no '(forward pass)'"; fi
on_tty sensitivity "$TREE" --method ddm --tf 0.5 -q
if grep -a -q 'mbsens sensitivity: t =' "$OUT"; then ko "-q shows progress"; else ok "-q: no progress"; fi
MBS_PROGRESS_DELAY=0 run sensitivity "$TREE" --method ddm --tf 4
if grep -q 'mbsens sensitivity: t =' "$ERR"; then ko "progress without a terminal"; else ok "no progress when stderr is not a terminal"; fi
on_tty simulate "$TREE" --tf 20 --out "$TMP/s.csv"
if grep -a -q 'mbsens simulate: t = ' "$OUT"; then ok "simulate: progress"; else ko "simulate: no progress"; fi
finish
