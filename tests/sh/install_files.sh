#!/bin/sh
# What `make install` puts besides the library (README.md, "Set-up"): the
# man page and the bash completion, made from the command's help texts
# (every command and option of every --help is in both), the models, the
# docs and the examples; `make install PREFIX=DIR` installs into DIR and
# `make lib` builds the library and the command only.
#
# Environment (set by CTest): MBS_CLI, MBS_SOURCE_DIR, MBS_BUILD_DIR.
SUITE=install_files
. "$MBS_SOURCE_DIR/tests/sh/lib/common.sh"
: "${MBS_BUILD_DIR:?MBS_BUILD_DIR not set}"
P=$TMP/prefix

if cmake --install "$MBS_BUILD_DIR" --prefix "$P" >"$TMP/install.log" 2>&1; then ok "cmake --install --prefix"; else
    ko "cmake --install"; tail -n 20 "$TMP/install.log"; finish; fi
for f in bin/mbsens share/man/man1/mbsens.1 share/bash-completion/completions/mbsens \
         share/mbsens/models/arm3.json share/mbsens/models/arm.urdf share/doc/mbsens/README.md \
         share/doc/mbsens/cli.md share/doc/mbsens/tutorial.md share/doc/mbsens/examples/hello_mbsens.c; do
    if [ -s "$P/$f" ]; then ok "installed $f"; else ko "missing $f"; fi
done
if "$P/bin/mbsens" info "$P/share/mbsens/models/arm3.json" >/dev/null 2>&1; then ok "the installed command reads an installed model"; else ko "installed model"; fi

# the man page: valid roff, every command and every option of the help texts
MAN=$P/share/man/man1/mbsens.1
if groff -man -ww -z "$MAN" >"$TMP/groff.log" 2>&1 && [ ! -s "$TMP/groff.log" ]; then ok "man page: groff, no warning"; else
    ko "man page: groff"; head "$TMP/groff.log"; fi
commands=$("$CLI" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
missing=""
for c in $commands; do
    grep -q "^\.SH \"mbsens $c\"" "$MAN" || missing="$missing $c"
    for o in $("$CLI" "$c" --help | grep -E '^ +-' | grep -oE -- '--[a-z][a-z0-9-]*'); do
        grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\e*-/')" "$MAN" || grep -q -- "$o" "$MAN" || missing="$missing $c:$o"
    done
done
if [ -z "$missing" ]; then ok "man page: every command and option"; else ko "man page lacks:$missing"; fi

# bash completion: commands, options, option values
COMP=$P/share/bash-completion/completions/mbsens
complete_words() {   # complete_words WORD... : the completions of the last word
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _mbsens; printf "%s\n" "${COMPREPLY[@]}"' \
        sh "$COMP" "$@" | sort | tr '\n' ' '
}
got=$(complete_words mbsens simu)
[ "$got" = "simulate " ] && ok "completion: simu -> simulate" || ko "completion: simu -> '$got'"
got=$(complete_words mbsens simulate --for)
[ "$got" = "--format --formulation " ] && ok "completion: --for" || ko "completion: --for -> '$got'"
got=$(complete_words mbsens simulate --integrator r)
[ "$got" = "rk4 " ] && ok "completion: --integrator r -> rk4" || ko "completion: --integrator r -> '$got'"
got=$(complete_words mbsens sensitivity --method c)
[ "$got" = "cavm cs " ] && ok "completion: --method c" || ko "completion: --method c -> '$got'"
got=$(complete_words mbsens assemble --mo)
[ "$got" = "--model-out " ] && ok "completion: assemble --mo" || ko "completion: assemble --mo -> '$got'"

# the Makefile: PREFIX reaches cmake --install; lib builds no test
cd "$MBS_SOURCE_DIR" || finish
if make -n install PREFIX=/opt/mbs BUILD=somewhere 2>/dev/null | grep -q 'cmake --install somewhere --prefix "/opt/mbs"'; then
    ok "make install PREFIX=/opt/mbs"; else ko "make install ignores PREFIX"; make -n install PREFIX=/opt/mbs BUILD=somewhere | tail -n 3; fi
if make -n install BUILD=somewhere 2>/dev/null | grep -q 'cmake --install somewhere *$'; then
    ok "make install without PREFIX: the configured prefix"; else ko "make install without PREFIX"; fi
if make -n lib BUILD=somewhere 2>/dev/null | grep -q -- '--target mbsens mbsens_static mbsens_cli mbsens_help_files'; then
    ok "make lib: the library and the command"; else ko "make lib"; fi
finish
