#!/bin/sh
# Print the OpenBLAS kernel (an OPENBLAS_CORETYPE value) under which `make
# check` runs the LAPACK-using tests a second time: one that differs from
# the environment's OPENBLAS_CORETYPE (unset: the kernel OpenBLAS detects)
# and that every processor of the architecture runs.
#   x86-64: Prescott (SSE3); Haswell if the environment already is
#           Prescott and the processor has AVX2, else Core2
#   arm64:  ARMV8; CORTEXA53 if the environment already is ARMV8
# (docs/testing.md)
set -eu
env=$(printf '%s' "${OPENBLAS_CORETYPE:-}" | tr 'A-Z' 'a-z')
case "$(uname -m)" in
    aarch64 | arm64)
        if [ "$env" = armv8 ]; then echo CORTEXA53; else echo ARMV8; fi ;;
    *)
        if [ "$env" != prescott ]; then echo Prescott
        elif grep -q -w avx2 /proc/cpuinfo 2>/dev/null; then echo Haswell
        else echo Core2; fi ;;
esac
