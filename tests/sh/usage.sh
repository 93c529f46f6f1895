#!/bin/sh
# Usage errors of the mbsens command (docs/cli.md, "Usage errors"): exit 2,
# the message, the one-line usage of the command and where its help is,
# never the whole help; the nearest command or option when one is near;
# value-list errors alike.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=usage
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
PENDULUM=$MBS_SOURCE_DIR/models/double_pendulum.json

# usage_err CMD LABEL: the last run is a usage error of CMD ("" for mbsens
# itself) whose standard error is the message, the one-line usage and the
# pointer to --help: three lines unless EXTRA lines precede the usage.
usage_err() {
    expect 2 "$2"
    stdout_empty "$2"
    if [ -n "$1" ]; then
        stderr_has "^mbsens $1: error: " "$2: the message comes first"
        stderr_has "^Usage: mbsens $1 " "$2: one-line usage"
        stderr_has "^See 'mbsens $1 --help'\.$" "$2: says where the help is"
    else
        stderr_has "^mbsens: error: " "$2: the message comes first"
        stderr_has "^Usage: mbsens COMMAND" "$2: one-line usage"
        stderr_has "^See 'mbsens --help'\.$" "$2: says where the help is"
    fi
    if grep -q '^Options:' "$ERR"; then ko "$2: the whole help was printed"; else ok "$2: not the whole help"; fi
    n=$(sed -n '/^Usage:/,$p' "$ERR" | wc -l)
    if [ "$n" -eq 2 ]; then ok "$2: usage and pointer are the last two lines"; else
        ko "$2: $n lines from the usage on"; sed 's/^/    stderr: /' "$ERR"; fi
}

# ---------------------------------------------------------------- commands
run simulat "$PENDULUM"
usage_err "" "misspelt command"
stderr_has "unknown command 'simulat' \(did you mean 'simulate'\?\)" "nearest command suggested"
run sensitivty "$PENDULUM"
stderr_has "did you mean 'sensitivity'\?" "a dropped letter"
run kinematcis "$PENDULUM"
stderr_has "did you mean 'kinematics'\?" "two letters swapped"
run frobnicate
usage_err "" "unknown command"
if grep -q 'did you mean' "$ERR"; then ko "no suggestion for a far name"; else ok "no suggestion for a far name"; fi
run help simulat
usage_err "" "help on a misspelt command"
stderr_has "did you mean 'simulate'\?" "help: nearest command suggested"
run --versoin
usage_err "" "misspelt global option"
stderr_has "did you mean '--version'\?" "nearest global option suggested"
run
usage_err "" "no command"

# ---------------------------------------------------------------- options
run simulate "$PENDULUM" --tff 2
usage_err simulate "misspelt option"
stderr_has "unknown option '--tff' \(did you mean '--tf'\?\)" "nearest option suggested"
stderr_has "^Usage: mbsens simulate MODEL \[OPTIONS\]$" "the usage line stops at the options"
run simulate "$PENDULUM" --integ rk4
stderr_has "did you mean '--integrator'\?" "the beginning of an option"
run sensitivity "$PENDULUM" --formulaton semi
stderr_has "did you mean '--formulation'\?" "a letter left out"
run kinematics "$PENDULUM" --hlep
stderr_has "did you mean '--help'\?" "--help is among the candidates"
run info "$PENDULUM" --bogus
usage_err info "unknown option"
if grep -q 'did you mean' "$ERR"; then ko "no suggestion for --bogus"; else ok "no suggestion for --bogus"; fi
run view "$PENDULUM" -o x.html --formulaton x
usage_err view "an option of another command"
stderr_has "^Usage: mbsens view MODEL \[TRAJECTORY.csv\] -o FILE.html \[OPTIONS\]$" "view: positional part kept"
run kinematics "$PENDULUM" --q
usage_err kinematics "option without its value"
run simulate "$PENDULUM" --integrator rk5
usage_err simulate "unknown value"
run simulate
usage_err simulate "missing MODEL"
run optimize "$PENDULUM" --max-iter 0
usage_err optimize "optimize: bad integer"

# ---------------------------------------------------------------- value lists
run inverse "$PENDULUM" --q 0.1,0.2,0.3
expect 2 "count error"
stderr_has "^mbsens inverse: error: --q: expected 2 values \(one per coordinate\), got 3$" "count named"
stderr_has "^  coordinates: theta1, theta2$" "coordinates listed"
stderr_has "^Usage: mbsens inverse MODEL \[OPTIONS\]$" "count error: one-line usage"
stderr_has "^See 'mbsens inverse --help'\.$" "count error: help pointer"
run kinematics "$PENDULUM" --qdd 0.1,abc
expect 2 "bad number"
stderr_has "invalid number 'abc' \(value 2\)" "bad number named"
stderr_has "^Usage: mbsens kinematics MODEL \[OPTIONS\]$" "bad number: one-line usage"
run check "$PENDULUM" --q 1
expect 2 "check --q count"
stderr_has "^See 'mbsens check --help'\.$" "check --q count: help pointer"

# ---------------------------------------------------------------- help is unchanged
run simulate --help
expect 0 "simulate --help"
stdout_has '^Options:' "--help prints the whole help"
finish
