#!/bin/sh
# Run the benchmark programs of a build directory and print their output:
# bench_core, bench_mujoco_fd and bench_large_tree.
#
#   sh scripts/bench.sh [BUILD_DIR] [OPTIONS...]      (make bench BUILD=...)
#
# BUILD_DIR defaults to `build`. OPTIONS are passed to every program
# (--quick, --min-time S, --reps N; see bench/bench_common.h). Numbers are
# only meaningful for a Release build on an otherwise idle machine; the
# programs print the machine, compiler and flags they were built with.
# OpenBLAS (used by the semi-recursive solver) runs single-threaded unless
# OPENBLAS_NUM_THREADS is set, so that every kernel uses one core.
# Exit status: 0 if every program succeeded, else 1 (bench_mujoco_fd exits
# non-zero when the agreement with MuJoCo is worse than 1e-9).
set -u

BUILD=${1:-build}
[ $# -gt 0 ] && shift

SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -d "$BUILD/bench" ]; then
    echo "bench.sh: $BUILD/bench does not exist (configure with -DMBS_BUILD_BENCH=ON and build first)" >&2
    exit 1
fi
BT=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
if [ "$BT" != "Release" ]; then
    echo "bench.sh: WARNING: $BUILD is a '${BT:-unknown}' build; benchmark with -DCMAKE_BUILD_TYPE=Release" >&2
fi

export MBS_SOURCE_DIR="${MBS_SOURCE_DIR:-$SRC}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

if command -v git >/dev/null 2>&1 && git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
    echo "source: $SRC (git $(git -C "$SRC" rev-parse --short HEAD), $(git -C "$SRC" status --porcelain --untracked-files=no | wc -l) modified tracked files)"
else
    echo "source: $SRC (not a git checkout)"
fi
echo "build: $BUILD ($BT)"
echo

status=0
failed=""
for prog in bench_core bench_mujoco_fd bench_large_tree; do
    exe="$BUILD/bench/$prog"
    if [ ! -x "$exe" ]; then
        echo "bench.sh: $exe was not built (MuJoCo missing?); skipped"
        echo
        continue
    fi
    echo "\$ OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS MBS_SOURCE_DIR=$MBS_SOURCE_DIR $exe $*"
    "$exe" "$@"
    rc=$?
    echo
    if [ "$rc" -ne 0 ]; then
        echo "bench.sh: $prog exited with status $rc"
        echo
        status=1
        failed="$failed $prog"
    fi
done
[ "$status" -ne 0 ] && echo "bench.sh: failed:$failed"
exit "$status"
