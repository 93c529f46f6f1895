#!/bin/sh
# sensitivity's choices of the command line (docs/cli.md, "sensitivity"):
# --method cs on an open tree takes the fr formulation it needs, and gives
# the gradient of --formulation fr --method cs; on a closed loop it is
# refused with the methods that apply.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR.
SUITE=sensitivity_cli
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
TREE=$MBS_SOURCE_DIR/tests/models/spring_tree.json

run sensitivity "$TREE" --method cs --tf 0.01 --json
expect 0 "--method cs without --formulation"
stdout_has '"formulation": "fr"' "cs takes fr"
cp "$OUT" "$TMP/auto.json"
run sensitivity "$TREE" --method cs --formulation fr --tf 0.01 --json
expect 0 "--method cs --formulation fr"
# the same computation: equal text but for the wall time
if diff "$TMP/auto.json" "$OUT" | grep -v wall_seconds | grep -q '^[<>]'; then
    ko "cs: the default differs from --formulation fr"; else ok "cs: the default is --formulation fr"; fi
run sensitivity "$TREE" --method cs --formulation semi --tf 0.01
expect 1 "--method cs --formulation semi"
stderr_has "use --formulation fr" "the message names the formulation to use"
run sensitivity "$MBS_SOURCE_DIR/models/fivebar.json" --method cs --tf 0.01
expect 1 "--method cs on a closed loop"
stderr_has "method cs is not available" "closed loop: refused"
stderr_has "--method ddm\|davm\|cavm with --formulation ali3p\|matrixr, or --method fd" "closed loop: the alternatives"
run sensitivity "$TREE" --tf 0.01 --json
expect 0 "default method"
stdout_has '"formulation": "semi"' "ddm keeps semi"
finish
