#!/bin/sh
# The portability matrix of the test suite (docs/testing.md): the whole
# suite (Release) for several builds, each under every OpenBLAS kernel the
# processor runs; the shell tests once more with Debian's python3 first on
# PATH; and a check of the CTest label `lapack` against the LAPACK/BLAS
# calls each test makes (scripts/lapack-probe.c).
#
#   sh scripts/portability-matrix.sh [OUT_DIR]        (default build-matrix)
#
# Environment:
#   MATRIX_BUILDS  names of the builds to run (default: all, see below)
#   MATRIX_CORES   OPENBLAS_CORETYPE values (default: Prescott Haswell
#                  SkylakeX Zen Cooperlake, those the processor runs)
#   MATRIX_TESTS   a ctest -R regular expression (default: every test)
#   MATRIX_SCOPE   label (default): the whole suite under MATRIX_FULL_CORE
#                  (Haswell) and the tests labelled `lapack` under the other
#                  kernels, since a test that calls no LAPACK/BLAS routine
#                  runs the same instructions under every kernel (the probe
#                  at the end checks the label against the calls); all: the
#                  whole suite under every kernel
#   MATRIX_TIMEOUT seconds a test may take (default 1500, CTest's; raise it
#                  when the matrix runs at low priority beside other work)
#   JOBS           ctest and build parallelism (2)
# Builds (CMAKE_C_FLAGS added to the Release flags):
#   base           none (what `make check` builds)
#   contract-fast  -ffp-contract=fast (matters in the functions compiled
#                  for AVX2/FMA: src/kernels/jacobians_1dof.c)
#   v3-off         -march=x86-64-v3 -ffp-contract=off (AVX2, FMA everywhere)
#   v3-fast        -march=x86-64-v3 -ffp-contract=fast (FMA contractions)
#   no-avx2        -DMBS_NO_AVX2_DISPATCH (the code a processor without
#                  AVX2 runs)
# Prints one line per build and kernel (PASS, or FAIL with the failed
# tests) and writes them to OUT_DIR/matrix.txt; logs in OUT_DIR/logs.
# Exit status 0 if everything passed.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$SRC/build-matrix}
JOBS=${JOBS:-2}
mkdir -p "$OUT/logs" || exit 1
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/matrix.txt
: >"$SUMMARY"
status=0

flags_of() {
    case "$1" in
        base) echo "" ;;
        contract-fast) echo "-ffp-contract=fast" ;;
        v3-off) echo "-march=x86-64-v3 -ffp-contract=off" ;;
        v3-fast) echo "-march=x86-64-v3 -ffp-contract=fast" ;;
        no-avx2) echo "-DMBS_NO_AVX2_DISPATCH" ;;
        *) return 1 ;;
    esac
}
has_flag() { grep -q -w "$1" /proc/cpuinfo 2>/dev/null; }
say() { echo "$*"; echo "$*" >>"$SUMMARY"; }

BUILDS=${MATRIX_BUILDS:-base contract-fast v3-off v3-fast no-avx2}
CORES=${MATRIX_CORES:-Prescott Haswell SkylakeX Zen Cooperlake}
TESTS=${MATRIX_TESTS:-.}
SCOPE=${MATRIX_SCOPE:-label}
FULL_CORE=${MATRIX_FULL_CORE:-Haswell}
case "$SCOPE" in label | all) ;; *) echo "portability-matrix.sh: MATRIX_SCOPE must be label or all, got '$SCOPE'" >&2; exit 2 ;; esac
# the example robots, for the tests that read them (skipped without)
if [ -z "${MBS_URDF_DIR:-}" ]; then
    for d in "$SRC/../shared/data/example-robot-data" "$SRC/../../shared/data/example-robot-data"; do
        [ -d "$d" ] && { MBS_URDF_DIR=$(cd "$d" && pwd); export MBS_URDF_DIR; break; }
    done
fi

say "portability matrix: $(uname -m), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
say "compiler: $(${CC:-cc} --version | head -n 1); OpenBLAS: $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?')"
say "environment: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, python3 first on PATH: $(command -v python3)"

# run_suite BUILD_DIR LABEL CTEST_LABEL_ARGS [VAR=VALUE...]
run_suite() {
    _b=$1 _label=$2 _only=$3
    shift 3
    _log=$OUT/logs/$(echo "$_label" | tr ' /=()' '_____').log
    env "$@" ctest --test-dir "$_b" -R "$TESTS" $_only --timeout "${MATRIX_TIMEOUT:-1500}" --output-on-failure -j "$JOBS" >"$_log" 2>&1
    _rc=$?
    _n=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1 of \2 failed/p' "$_log")
    if [ $_rc -eq 0 ]; then say "  $_label: PASS (${_n:-?})"; else
        status=1
        say "  $_label: FAIL (${_n:-?}): $(awk '/tests FAILED:/ { f = 1; next } f && / - / { print $3 }' "$_log" |
                                        tr '\n' ' ')"
    fi
}

for b in $BUILDS; do
    fl=$(flags_of "$b") || { say "$b: unknown build"; status=1; continue; }
    case "$fl" in *x86-64-v3*) has_flag avx2 && has_flag fma || { say "$b: skipped (no AVX2/FMA)"; continue; } ;; esac
    dir=$OUT/$b
    say "build $b (CMAKE_C_FLAGS='$fl')"
    if ! { cmake -S "$SRC" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DMBS_BUILD_BENCH=OFF -DCMAKE_C_FLAGS="$fl" &&
           cmake --build "$dir" -j "$JOBS"; } >"$OUT/logs/build-$b.log" 2>&1; then
        say "  build FAILED (logs/build-$b.log)"
        status=1
        continue
    fi
    for c in $CORES; do
        case "$c" in SkylakeX | Cooperlake) has_flag avx512f || { say "  $c: skipped (no AVX-512)"; continue; } ;; esac
        case "$c" in Haswell | Zen) has_flag avx2 || { say "  $c: skipped (no AVX2)"; continue; } ;; esac
        # the kernel OpenBLAS actually loads (an unknown name falls back to the detected one)
        core=$(OPENBLAS_VERBOSE=2 OPENBLAS_CORETYPE=$c "$dir/tests/test_forward_dynamics" 2>&1 >/dev/null |
               sed -n 's/^Core: //p' | head -n 1)
        only=""
        [ "$SCOPE" = label ] && [ "$c" != "$FULL_CORE" ] && only="-L lapack"
        run_suite "$dir" "$b $c (kernel ${core:-?})${only:+ lapack tests}" "$only" OPENBLAS_CORETYPE="$c"
    done
    if [ "$b" = base ] && [ -x /usr/bin/python3 ]; then
        ( export PATH="/usr/bin:$PATH"; TESTS='^sh_'; run_suite "$dir" "$b shell tests, python3 = /usr/bin/python3" "" )
        [ "$(tail -n 1 "$SUMMARY" | grep -c FAIL)" -eq 0 ] || status=1
    fi
done

# The label `lapack` against the calls each test makes (base build).
if [ -d "$OUT/base/tests" ]; then
    probe=$OUT/lapack-probe.so
    names=$(grep -rhoE '(LAPACKE|cblas)_[a-z0-9_]+' "$SRC/src" "$SRC/cli" | sort -u)
    missing=""
    for n in $names; do grep -q "WRAP(lapack_int, $n,\|^void $n(" "$SRC/scripts/lapack-probe.c" || missing="$missing $n"; done
    if [ -n "$missing" ]; then
        say "lapack label: scripts/lapack-probe.c does not wrap:$missing"
        status=1
    elif ${CC:-cc} -O2 -shared -fPIC -o "$probe" "$SRC/scripts/lapack-probe.c" -ldl; then
        labelled=$(ctest --test-dir "$OUT/base" -N -L lapack | sed -n 's/^ *Test *#[0-9]*: //p')
        bad=""
        for t in $(ctest --test-dir "$OUT/base" -N | sed -n 's/^ *Test *#[0-9]*: //p'); do
            rm -f "$OUT/logs/probe-$t"
            MBS_LAPACK_PROBE="$OUT/logs/probe-$t" LD_PRELOAD="$probe" \
                ctest --test-dir "$OUT/base" -R "^$t\$" >"$OUT/logs/probe-$t.ctest" 2>&1
            grep -q 'Skipped\|Not Run' "$OUT/logs/probe-$t.ctest" && continue
            uses=0
            [ -s "$OUT/logs/probe-$t" ] && uses=1
            has=0
            echo "$labelled" | grep -q -x "$t" && has=1
            [ $uses -eq 1 ] && [ $has -eq 0 ] && bad="$bad $t(uses LAPACK, not labelled)"
            [ $uses -eq 0 ] && [ $has -eq 1 ] && bad="$bad $t(labelled, no LAPACK call)"
        done
        if [ -z "$bad" ]; then say "lapack label: matches the calls of every test"; else
            say "lapack label: mismatches:$bad"; status=1; fi
    else
        say "lapack label: could not build the probe"
        status=1
    fi
fi
exit $status
