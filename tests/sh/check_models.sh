#!/bin/sh
# mbsens check with its defaults (10 samples, one mbs_data for all of them)
# on every model in models/ and tests/models/: every derivative block agrees
# with complex step (anchor_lift.json to its conditioning, below).
# tests/models/bad_*.json are invalid on purpose: they must be refused with
# a message naming the file.
SUITE=check_models
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
SRC=$MBS_SOURCE_DIR

n=0
for f in "$SRC"/models/*.json "$SRC"/tests/models/*.json; do
    name=${f#"$SRC"/}
    n=$((n + 1))
    case $(basename "$f") in
    anchor_lift.json)
        # The blocks through M^-1 (dqdd/..., fr vs semi) carry round-off
        # times the condition number of M, 1.0e9 for this chain (eigenvalues
        # 6.5e-4 .. 6.5e5 without the Euler parameters at q0: a 1.3 kg link's
        # 6.5e-4 kg m^2 against the 570 kg anchor 6 m down the chain):
        # eps kappa = 2.2e-16 x 1.0e9. The inverse-dynamics blocks still
        # come out near 1e-15.
        run check "$f" --tol 2.2e-7 ;;
    *)
        run check "$f" ;;
    esac
    case $(basename "$f") in
    bad_*)
        if [ "$rc" -ne 0 ] && grep -q -F "$f" "$ERR" && ! grep -q "agree" "$OUT"; then
            ok "$name refused (exit $rc)"
        else
            ko "$name: expected a load error naming the file (exit $rc)"
            sed 's/^/    stderr: /' "$ERR" | head -n 5
        fi ;;
    *)
        expect 0 "check $name"
        stdout_has "^all derivatives agree" "$name: every block within the tolerance" ;;
    esac
done
# the globs matched: the shipped and the test models are there
[ "$n" -ge 10 ] && ok "$n models checked" || ko "only $n models found"
finish
