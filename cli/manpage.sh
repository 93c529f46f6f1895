#!/bin/sh
# manpage.sh MBSENS [OUT] - the man page of the mbsens command, made
# from its own help texts (`mbsens --help` and `mbsens COMMAND --help`), so
# that the two never disagree. Run by the build (CMakeLists.txt).
set -eu
CLI=$1
[ $# -ge 2 ] && exec >"$2"
# roff: a backslash is \e; a line starting with . or ' would be a request
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
version=$("$CLI" --version | sed 's/^mbsens //')
commands=$("$CLI" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
cat <<ROFF
.TH MBSENS 1 "" "mbsens $version" "User Commands"
.SH NAME
mbsens \- recursive multibody dynamics with analytical sensitivities
.SH SYNOPSIS
.nf
ROFF
"$CLI" --help | sed -n '1,/^$/p' | sed 's/^Usage: *//; s/^ *//' | grep -v '^$' | esc
cat <<ROFF
.fi
.SH DESCRIPTION
.nf
ROFF
"$CLI" --help | sed '1,/^$/d' | esc
echo ".fi"
for c in $commands; do
    echo ".SH \"mbsens $c\""
    echo ".nf"
    "$CLI" "$c" --help | esc
    echo ".fi"
done
cat <<ROFF
.SH FILES
Models, documentation and examples are installed under share/mbsens and
share/doc/mbsens of the prefix (models/*.json, docs/*.md).
.SH SEE ALSO
docs/cli.md, docs/tutorial.md and docs/model-format.md of the mbsens sources.
ROFF
