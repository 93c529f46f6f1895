#!/bin/sh
# Where the library and the command line still use a coordinate index:
# every use of `qoff`, `nq` or `qpar` (whole words, outside comments and
# string literals) in src/ and cli/, one line per file, function and name
# with its count:
#
#   sh scripts/index_audit.sh                 # print the list
#   sh scripts/index_audit.sh --check LIST    # compare with LIST (the ctest)
#
# Velocity-sized arrays are `nv` long and indexed by `voff` (the parent
# velocity: `vpar`); `nq` and `qoff` remain where the configuration q
# itself is meant. LIST (tests/index_audit.txt) holds the expected lines,
# each followed by a one-word reason:
#   coordinate  q itself: its size, its entries, its names, the coordinate API
#   quat        the quaternion (Euler parameters) inside q
#   map         q and v side by side where q is moved by a velocity-sized
#               step (an additive update, a difference) or read by one index
#   sample      random draws that fill q and v in one loop (the draw order
#               fixes the results)
#   layout      a record of the model (a joint type, a joint) and its text
#   pending     code that would be wrong with nv < nq and whose fix needs
#               a later step of docs/tangent-plan.md (the manifold
#               integrators and sensitivities C1-C8, the command line's
#               velocity names A7): the comment line above it in LIST
#               says which step and why
# --check fails when the lines differ (a new use, a renamed one, a count
# that changed: the diff is printed) or a reason is not one of these.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)

audit() {
    cd "$SRC"
    find src cli -name '*.[ch]' | LC_ALL=C sort | xargs awk '
        # comments and string literals out (a comment may span lines)
        function strip(s,    out, i, c, n) {
            out = ""
            n = length(s)
            for (i = 1; i <= n; i++) {
                c = substr(s, i, 1)
                if (incomment) {
                    if (c == "*" && substr(s, i + 1, 1) == "/") { incomment = 0; i++ }
                    continue
                }
                if (instr) {
                    if (c == "\\") { i++; continue }
                    if (c == instr) instr = ""
                    continue
                }
                if (c == "/" && substr(s, i + 1, 1) == "*") { incomment = 1; i++; continue }
                if (c == "/" && substr(s, i + 1, 1) == "/") break
                if (c == "\"" || c == "\047") { instr = c; continue }
                out = out c
            }
            return out
        }
        FNR == 1 { ctx = "(file)"; incomment = 0; instr = "" }
        {
            raw = $0
            if (incomment && index(raw, "*/") == 0) line = ""
            else if (!incomment && raw !~ /["\047\/]/) line = raw
            else line = strip(raw)
            instr = ""
            # the scope: a definition starts at column 0, a brace at column 0 ends it
            if (line ~ /^}/) { closing = 1 } else { closing = 0 }
            if (line ~ /^(typedef[ \t]+)?struct[ \t]+[A-Za-z_][A-Za-z0-9_]*/ && line !~ /;[ \t]*$/) {
                s = line
                sub(/^(typedef[ \t]+)?struct[ \t]+/, "", s)
                sub(/[^A-Za-z0-9_].*/, "", s)
                ctx = "struct " s
            } else if (line ~ /^[A-Za-z_].*\(/ && line !~ /^(typedef|extern|return|if|for|while)[ \t(]/ &&
                       line !~ /;[ \t]*$/ && line !~ /=/) {
                s = line
                sub(/\(.*/, "", s)
                sub(/.*[^A-Za-z0-9_]/, "", s)
                if (s == "MBS_K" || s == "MBS_CS") {
                    s = line
                    sub(/^[^(]*\(/, "", s)
                    sub(/\).*/, "", s)
                }
                ctx = s
            }
            n = split(line, w, /[^A-Za-z0-9_]+/)
            for (k = 1; k <= n; k++)
                if (w[k] == "qoff" || w[k] == "nq" || w[k] == "qpar") count[FILENAME SUBSEP ctx SUBSEP w[k]]++
            if (closing) ctx = "(file)"
        }
        END { for (e in count) { split(e, p, SUBSEP); printf "%s:%s %s %d\n", p[1], p[2], p[3], count[e] } }
        ' | LC_ALL=C sort
}

case "${1:-}" in
"")
    audit
    ;;
--check)
    LIST=${2:?usage: index_audit.sh --check LIST}
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
    audit >"$TMP/now"
    grep -v '^#' "$LIST" | grep -v '^[[:space:]]*$' >"$TMP/list"
    bad=$(awk '$NF !~ /^(coordinate|quat|map|sample|layout|pending)$/ { print }' "$TMP/list")
    if [ -n "$bad" ]; then
        printf 'index_audit: lines of %s without a known reason:\n%s\n' "$LIST" "$bad" >&2
        exit 1
    fi
    awk '{ $NF = ""; sub(/ $/, ""); print }' "$TMP/list" >"$TMP/expected"
    if ! diff -u "$TMP/expected" "$TMP/now" >"$TMP/diff"; then
        echo "index_audit: the uses of qoff/nq/qpar differ from $LIST (- listed, + found):" >&2
        cat "$TMP/diff" >&2
        exit 1
    fi
    echo "index_audit: $(wc -l <"$TMP/now") entries, as listed"
    ;;
*)
    echo "usage: index_audit.sh [--check LIST]" >&2
    exit 2
    ;;
esac
