#!/bin/sh
# The main job on shipped models (`make demo`): a guided run of the command
# line tool. Its final part is the five-bar sensitivity table of the thesis
# (Tables 7.4-7.6) by direct differentiation, the adjoints and finite
# differences side by side.
#
#   sh scripts/demo.sh [BUILD_DIR]
set -eu
BUILD=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
MBS="$BUILD/mbsens"
[ -x "$MBS" ] || { echo "demo: $MBS not found; run 'make build' first" >&2; exit 1; }

step() { printf '\n==> %s\n    $ %s\n' "$1" "$2"; }

step "A model: the 43-DOF human of Zhakatayev et al. (D-H placement)" \
     "mbsens info models/human43.json"
"$MBS" info "$SRC/models/human43.json" | head -12

step "Inverse dynamics of the double pendulum at rest (holding torques)" \
     "mbsens inverse models/double_pendulum.json --q 0.5,0.5"
"$MBS" inverse "$SRC/models/double_pendulum.json" --q 0.5,0.5

step "Every analytical derivative against complex step, on the human model" \
     "mbsens check models/human43.json --samples 2"
"$MBS" check "$SRC/models/human43.json" --samples 2

step "A simulation (trapezoidal rule, 1 ms): the last rows" \
     "mbsens simulate models/double_pendulum.json --tf 2"
"$MBS" simulate "$SRC/models/double_pendulum.json" --tf 2 --quiet | tail -3 | cut -c1-110

FIVEBAR="$SRC/models/fivebar.json"
step "The five-bar linkage (thesis 7.1): a closed loop, cut automatically" \
     "mbsens info models/fivebar.json"
"$MBS" info "$FIVEBAR" | sed -n '1,6p'

step "Five-bar sensitivities, 5 s at 1 ms: ALI3-P, reference point at the CoM, DDM" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --method ddm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --method ddm --tf 5

step "The same with Matrix R and the reference point at the global origin (RTdyn1)" \
     "mbsens sensitivity models/fivebar.json --formulation matrixr --ref origin --method ddm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation matrixr --ref origin --method ddm --tf 5

step "The discrete adjoint (DAVM) of ALI3-P: the transpose of the DDM's recursion on the same step
      linearization (the same discrete gradient, backwards, all objectives at once)" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --ref origin --method davm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --ref origin --method davm --tf 5

step "Our own reference: central differences over 11 re-assembled simulations (ALI3-P; step 1e-4:
      the iterative solver converges to 1e-10, smaller steps amplify its noise)" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --method fd --fd-step 1e-4 --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --method fd --fd-step 1e-4 --tf 5

step "The continuous adjoint (CAVM) of the same equations, ALI3-P forward run, 1 ms steps: the
      continuous gradient (the DDM's differ from it by the O(h^2) of the discretization)" \
     "mbsens sensitivity models/fivebar.json --formulation ali3p --method cavm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation ali3p --method cavm --tf 5

step "CAVM with Matrix R and the reference point at the global origin" \
     "mbsens sensitivity models/fivebar.json --formulation matrixr --ref origin --method cavm --tf 5"
"$MBS" sensitivity "$FIVEBAR" --formulation matrixr --ref origin --method cavm --tf 5

cat <<'TXT'

Thesis Tables 7.4-7.6 (reference row):     L_s1      L_s2      m_A1        rG      L_A1
  dpsi1/drho                              -4.228     3.212    0.3186    0.4423     3.360
  dpsi2/drho                              -15.45     50.32    0.9700    0.7454    -27.37
  dpsi3/drho                               221.8      2437    -32.51    -85.70     -2547

Open trees also have the adjoints: the same table by the discrete adjoint
(davm) and the continuous adjoint (cavm, CVODES) on a spatial test model:
TXT
OBJ="$SRC/tests/models/spring_tree.json"
for meth in ddm davm cavm fd; do
    step "Spatial tree with springs, 0.5 s at 1 ms, method $meth" \
         "mbsens sensitivity tests/models/spring_tree.json --tf 0.5 --method $meth"
    "$MBS" sensitivity "$OBJ" --tf 0.5 --method $meth
done
