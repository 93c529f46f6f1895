#!/bin/sh
# Install test: install the build tree into a temporary prefix, then build
# examples/hello_mbsens.c against the installed library in the two ways a
# user would (pkg-config and find_package(mbsens)), run it on the double
# pendulum and check the static joint torques against the closed form
#     tau2 = M_Q g L2 sin(q1 + q2)
#     tau1 = g (M_P L1 sin q1 + M_Q (L1 sin q1 + L2 sin(q1 + q2)))
# with the model's values L1 = L2 = 1 m, M_P = M_Q = 1 kg, g = 9.81.
#
# Environment (set by CTest): MBS_SOURCE_DIR, MBS_BUILD_DIR, MBS_SANITIZE.
# When the build is instrumented (MBS_SANITIZE on), the example is compiled
# with the same sanitizer flags: an ASan-instrumented shared library can only
# be loaded by a program that links the ASan runtime first.
SUITE=install NO_CLI=1
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
: "${MBS_BUILD_DIR:?MBS_BUILD_DIR not set}"
MBS_SANITIZE=${MBS_SANITIZE:-OFF}
PREFIX=$TMP/prefix
MODEL=$MBS_SOURCE_DIR/models/double_pendulum.json

case $(echo "$MBS_SANITIZE" | tr '[:upper:]' '[:lower:]') in
    on|1|true|yes|y) SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" ;;
    *) SANFLAGS="" ;;
esac

if cmake --install "$MBS_BUILD_DIR" --prefix "$PREFIX" >"$TMP/install.log" 2>&1; then
    ok "cmake --install into $PREFIX"
else
    cat "$TMP/install.log"
    ko "cmake --install"
    finish
fi

# The library directory is lib/ or lib/<multiarch>/ depending on GNUInstallDirs.
PC=$(find "$PREFIX" -name mbsens.pc -path '*/pkgconfig/*' | head -n 1)
if [ -n "$PC" ]; then ok "installed mbsens.pc ($PC)"; else ko "no mbsens.pc under $PREFIX"; finish; fi
PCDIR=$(dirname "$PC")
LIBDIR=$(dirname "$PCDIR")
[ -f "$PREFIX/include/mbsens/mbsens.h" ] && ok "installed headers" || ko "no include/mbsens/mbsens.h"
ls "$LIBDIR"/libmbsens.so* >/dev/null 2>&1 && ok "installed shared library in $LIBDIR" \
    || ko "no libmbsens.so in $LIBDIR"
[ -f "$LIBDIR/cmake/mbsens/mbsensConfig.cmake" ] && ok "installed CMake package" \
    || ko "no $LIBDIR/cmake/mbsens/mbsensConfig.cmake"

# check_output FILE Q1 Q2 LABEL: n_dof and the torques printed by hello_mbsens
check_output() {
    out=$1; q1=$2; q2=$3; label=$4
    if grep -qx 'n_dof 2' "$out"; then ok "$label: n_dof 2"; else ko "$label: n_dof line: $(grep n_dof "$out")"; fi
    if awk -v q1="$q1" -v q2="$q2" '
        $1 == "tau" {
            seen = 1
            g = 9.81; L1 = 1; L2 = 1; mP = 1; mQ = 1
            t2 = mQ * g * L2 * sin(q1 + q2)
            t1 = g * (mP * L1 * sin(q1) + mQ * (L1 * sin(q1) + L2 * sin(q1 + q2)))
            e1 = $2 - t1; if (e1 < 0) e1 = -e1
            e2 = $3 - t2; if (e2 < 0) e2 = -e2
            if (NF != 3 || e1 > 1e-9 * (1 + (t1 < 0 ? -t1 : t1)) || e2 > 1e-9 * (1 + (t2 < 0 ? -t2 : t2))) {
                printf "tau = (%s, %s), expected (%.15g, %.15g)\n", $2, $3, t1, t2
                bad = 1
            }
        }
        END { exit (seen && !bad) ? 0 : 1 }' "$out"; then
        ok "$label: static torques at q = ($q1, $q2)"
    else
        ko "$label: static torques at q = ($q1, $q2)"
    fi
}

# run_example EXE LABEL
run_example() {
    exe=$1; label=$2
    for qq in "0.3 0" "0.4 -0.9" "-2.5 1.2"; do
        # shellcheck disable=SC2086
        set -- $qq
        if LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$exe" "$MODEL" "$1" "$2" \
            >"$TMP/out.txt" 2>"$TMP/err.txt"; then
            ok "$label: runs at q = ($1, $2)"
            check_output "$TMP/out.txt" "$1" "$2" "$label"
        else
            cat "$TMP/out.txt" "$TMP/err.txt"
            ko "$label: exit status at q = ($1, $2)"
        fi
    done
    # the output its header comment shows (the version line aside)
    awk '/^ \*     \$ hello_mbsens/ { on = 1; next } on && /^ \*     / { print substr($0, 8); next } { on = 0 }' \
        "$MBS_SOURCE_DIR/examples/hello_mbsens.c" | grep -v '^mbsens ' >"$TMP/shown.txt"
    LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$exe" "$MODEL" 0.3 0 2>&1 |
        grep -v '^mbsens ' >"$TMP/printed.txt"
    if [ -s "$TMP/shown.txt" ] && cmp -s "$TMP/shown.txt" "$TMP/printed.txt"; then
        ok "$label: prints what examples/hello_mbsens.c says"
    else
        diff "$TMP/shown.txt" "$TMP/printed.txt"
        ko "$label: the output differs from the header of examples/hello_mbsens.c"
    fi
    # a bad argument is an error, not a crash
    if LD_LIBRARY_PATH=$LIBDIR "$exe" "$MBS_SOURCE_DIR/models/no_such_model.json" >/dev/null 2>&1; then
        ko "$label: a missing model file must fail"
    else
        ok "$label: a missing model file fails"
    fi
}

# (a) pkg-config + cc
# The installed .pc file must describe the prefix it was installed to
# (`cmake --install --prefix` after configuring with another prefix): its
# libdir must be the directory it was found in.
PCOPT=""
PC_LIBDIR=$(PKG_CONFIG_PATH=$PCDIR pkg-config --variable=libdir mbsens 2>"$TMP/pc.err")
if [ -n "$PC_LIBDIR" ] && [ "$(cd "$PC_LIBDIR" 2>/dev/null && pwd -P)" = "$(cd "$LIBDIR" && pwd -P)" ]; then
    ok "mbsens.pc: libdir is the installed $LIBDIR"
else
    cat "$TMP/pc.err"
    ko "mbsens.pc is not relocatable: libdir=$PC_LIBDIR ($(grep '^prefix=' "$PC")), installed in $LIBDIR"
    # go on with the prefix overridden, to still test the rest
    PCOPT="--define-variable=prefix=$PREFIX"
fi
# shellcheck disable=SC2086
CFLAGS_PC=$(PKG_CONFIG_PATH=$PCDIR pkg-config $PCOPT --cflags mbsens 2>"$TMP/pc.err") &&
LIBS_PC=$(PKG_CONFIG_PATH=$PCDIR pkg-config $PCOPT --libs mbsens 2>>"$TMP/pc.err")
if [ $? -eq 0 ] && [ -n "$LIBS_PC" ]; then ok "pkg-config mbsens: $CFLAGS_PC $LIBS_PC"; else cat "$TMP/pc.err"; ko "pkg-config mbsens"; fi
# shellcheck disable=SC2086
if cc -std=c11 -Wall -Wextra -Wpedantic -Werror $SANFLAGS $CFLAGS_PC \
    "$MBS_SOURCE_DIR/examples/hello_mbsens.c" -o "$TMP/hello_pc" $LIBS_PC >"$TMP/cc.log" 2>&1; then
    ok "pkg-config: compile hello_mbsens.c${SANFLAGS:+ (with $SANFLAGS)}"
    run_example "$TMP/hello_pc" "pkg-config"
else
    cat "$TMP/cc.log"
    ko "pkg-config: compile hello_mbsens.c"
fi

# (b) CMake find_package(mbsens)
if cmake -S "$MBS_SOURCE_DIR/examples" -B "$TMP/build-ex" -DCMAKE_PREFIX_PATH="$PREFIX" \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$SANFLAGS -Wall -Wextra -Wpedantic" \
        -DCMAKE_EXE_LINKER_FLAGS="$SANFLAGS" >"$TMP/cmake.log" 2>&1 \
   && cmake --build "$TMP/build-ex" >>"$TMP/cmake.log" 2>&1; then
    ok "find_package(mbsens): configure and build examples/"
    if grep -q 'warning' "$TMP/cmake.log"; then
        grep 'warning' "$TMP/cmake.log"
        ko "find_package(mbsens): warnings while building the example"
    fi
    run_example "$TMP/build-ex/hello_mbsens" "find_package"
    # the program's own objective: the same gradient by the DDM and the discrete adjoint
    for meth in ddm davm; do
        if LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$TMP/build-ex/own_objective" \
            "$MBS_SOURCE_DIR/models/fivebar.json" $meth >"$TMP/own_$meth.txt" 2>"$TMP/err.txt" &&
            grep -q '^dpsi/dL_A1 ' "$TMP/own_$meth.txt"; then
            ok "own_objective: runs ($meth)"
        else
            cat "$TMP/own_$meth.txt" "$TMP/err.txt"
            ko "own_objective: $meth"
        fi
    done
    if awk 'NR == FNR { a[$1] = $2; next } { d = a[$1] - $2; if (d < 0) d = -d; s = $2 < 0 ? -$2 : $2;
            if (d > 1e-7 * (s > 1 ? s : 1)) bad = 1 } END { exit bad }' "$TMP/own_ddm.txt" "$TMP/own_davm.txt"; then
        ok "own_objective: ddm = davm (1e-7)"
    else
        ko "own_objective: ddm and davm differ"
    fi
else
    cat "$TMP/cmake.log"
    ko "find_package(mbsens): configure and build examples/"
fi

finish
