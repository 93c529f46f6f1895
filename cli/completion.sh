#!/bin/sh
# completion.sh MBSENS [OUT] - bash completion for the mbsens
# command, made from its help texts: the commands of `mbsens --help`, the
# options of each `mbsens COMMAND --help` (every "-x" or "--name" that
# starts an option line), and the values written NAME|NAME|... in the
# usage lines. Run by the build (CMakeLists.txt).
set -eu
CLI=$1
[ $# -ge 2 ] && exec >"$2"
commands=$("$CLI" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
cat <<'BASH'
# bash completion for mbsens (generated from its help texts by cli/completion.sh)
_mbsens()
{
    local cur prev cmd words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]:-}
    if [ "$COMP_CWORD" -eq 1 ]; then
BASH
printf '        COMPREPLY=( $(compgen -W "%s --help --version" -- "$cur") )\n' "$(echo $commands) help"
cat <<'BASH'
        return
    fi
    case "$cmd" in
BASH
for c in $commands; do
    help=$("$CLI" "$c" --help)
    opts=$(printf '%s\n' "$help" | sed -n '/^Options:/,$p' | grep -E '^ +-' |
        grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u | tr '\n' ' ')
    printf '    %s)\n' "$c"
    printf '        case "$prev" in\n'
    # option values: "[--opt a|b|c]" or "--opt a|b|c" in the usage lines
    printf '%s\n' "$help" | sed -n '1,/^$/p' | grep -oE -- '--[a-z-]+ [a-z0-9]+(\|[a-z0-9]+)+' | sort -u |
        while read -r opt vals; do
            printf '            %s) COMPREPLY=( $(compgen -W "%s" -- "$cur") ); return ;;\n' "$opt" "$(echo "$vals" | tr '|' ' ')"
        done
    printf '        esac\n'
    printf '        if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "%s" -- "$cur") ); return; fi\n' "$opts"
    printf '        ;;\n'
done
cat <<'BASH'
    esac
    COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o filenames -F _mbsens mbsens
BASH
