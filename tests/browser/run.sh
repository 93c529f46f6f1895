#!/bin/sh
# The viewer's browser tests (tests/browser/test_viewer.mjs) in Debian's
# headless Chromium, driven by playwright-core from viewer/package-lock.json
# (npm ci). Also checks that the committed page, viewer/dist/viewer.html,
# is what viewer/src builds. `make check` runs this after the C suites,
# which do not depend on it. Usage: run.sh [BUILD_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CHROMIUM=${MBS_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ] || ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "browser tests: skipped (no $CHROMIUM, node or npm; scripts/install-deps.sh installs them)"
    exit 0
fi
cd "$SRC/viewer"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --ignore-scripts
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node build.mjs --out "$tmp/viewer.html" >/dev/null
if ! cmp -s "$tmp/viewer.html" dist/viewer.html; then
    echo "browser tests: viewer/dist/viewer.html is not what viewer/src builds: run 'npm run build' in viewer/" >&2
    exit 1
fi
echo "viewer/dist/viewer.html is up to date with viewer/src"
MBS_CLI="$BUILD/mbsens" MBS_SOURCE_DIR="$SRC" node --test "$SRC/tests/browser/test_viewer.mjs"
