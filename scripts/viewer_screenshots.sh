#!/bin/sh
# The viewer screenshots of docs/figures (docs/viewer.md): the five-bar with
# its sensitivity table, the bicycle run, a robot (a1 of the example robots
# where they are, ../shared/data/example-robot-data or $MBS_URDF_DIR; else
# our tests/urdf/viewer_arm.urdf). Needs chromium and viewer/node_modules
# (npm ci in viewer/). Usage: scripts/viewer_screenshots.sh [BUILD_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd)/mbsens
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
F=$SRC/docs/figures
shot() { node "$SRC/scripts/viewer_screenshot.mjs" "$@"; }

"$B" simulate "$SRC/models/fivebar.json" --tf 3 --out "$T/fivebar.csv" -q
"$B" sensitivity "$SRC/models/fivebar.json" --json > "$T/grad.json"
"$B" view "$SRC/models/fivebar.json" "$T/fivebar.csv" -o "$T/fivebar.html" --sensitivity "$T/grad.json" \
    --trace b12.P2 --title "fivebar: 3 s run, trace of b12.P2"
shot "$T/fivebar.html" "$F/viewer_fivebar.png" 1200
shot "$T/fivebar.html" "$F/viewer_fivebar_sensitivity.png" 1200 sens

"$B" simulate "$SRC/models/bicycle.json" --out "$T/bicycle.csv" -q
"$B" view "$SRC/models/bicycle.json" "$T/bicycle.csv" -o "$T/bicycle.html" --trace front_wheel.centre \
    --title "bicycle: 10 s run (tires on a plane)"
shot "$T/bicycle.html" "$F/viewer_bicycle.png" 2500

R=${MBS_URDF_DIR:-$SRC/../shared/data/example-robot-data}
if [ -f "$R/a1.urdf" ]; then U=$R/a1.urdf; else U=$SRC/tests/urdf/viewer_arm.urdf; fi
"$B" simulate "$U" --tf 2 --out "$T/robot.csv" -q
"$B" view "$U" "$T/robot.csv" -o "$T/robot.html" --title "$(basename "$U" .urdf): 2 s swinging under gravity"
shot "$T/robot.html" "$F/viewer_robot.png" 300
echo "wrote $F/viewer_fivebar.png, viewer_fivebar_sensitivity.png, viewer_bicycle.png, viewer_robot.png"
