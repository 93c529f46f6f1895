#!/bin/sh
# Run the libFuzzer target fuzz_load (fuzz/fuzz_load.c) of a build made with
# -DMBS_FUZZ=ON (make fuzz). docs/testing.md "Fuzzing".
#
#   sh scripts/fuzz.sh BUILD_DIR SECONDS [LIBFUZZER OPTIONS...]
#
# The seed corpus is made from the models in models/, tests/models/ and
# tests/urdf/; the dictionary from the member names and string values of
# those JSON models (tests/models/all_sections.json has every member of the
# format) and the element and attribute names of the URDF files. The corpus
# that libFuzzer grows is kept in BUILD_DIR/fuzz/corpus across runs; a
# crash, time-out or leak is written as BUILD_DIR/fuzz/crash-* (or
# timeout-*, leak-*, oom-*) and makes the script exit non-zero.
set -eu

BUILD=${1:?usage: fuzz.sh BUILD_DIR SECONDS [LIBFUZZER OPTIONS...]}
SECONDS_=${2:?usage: fuzz.sh BUILD_DIR SECONDS [LIBFUZZER OPTIONS...]}
shift 2
SRC=$(cd "$(dirname "$0")/.." && pwd)
EXE="$BUILD/fuzz/fuzz_load"
OUT="$BUILD/fuzz"
[ -x "$EXE" ] || { echo "fuzz.sh: $EXE not built (make fuzz)" >&2; exit 1; }

mkdir -p "$OUT/seeds" "$OUT/corpus"
for f in "$SRC"/models/*.json "$SRC"/tests/models/*.json "$SRC"/tests/urdf/*.urdf; do
    cp "$f" "$OUT/seeds/"
done

# dictionary: "key": and "value" strings of the JSON seeds, <element and
# attribute= names of the URDF seeds, and the JSON literals
{
    printf '"true"\n"false"\n"null"\n"{"\n"}"\n"["\n"]"\n":"\n","\n'
    cat "$SRC"/models/*.json "$SRC"/tests/models/*.json |
        grep -o '"[A-Za-z_][A-Za-z0-9_.]*"' | sort -u | sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$/"/'
    cat "$SRC"/tests/urdf/*.urdf | grep -o '<[a-z_]*\|[a-z_]*="' | sort -u |
        sed 's/"/\\"/g; s/^/"/; s/$/"/'
} > "$OUT/model.dict"

echo "fuzz.sh: $(ls "$OUT/seeds" | wc -l) seeds, $(ls "$OUT/corpus" | wc -l) corpus entries," \
     "$(wc -l < "$OUT/model.dict") dictionary entries, $SECONDS_ s"
cd "$OUT"
# -max_len: large enough for the small models; the largest seeds (human43)
# are truncated, their mutations would only slow the run down
exec ./fuzz_load -max_total_time="$SECONDS_" -dict=model.dict -max_len=16384 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 "$@" corpus seeds
