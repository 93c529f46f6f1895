#!/bin/sh
# Install the Debian packages mbsens needs to build, test and benchmark.
# Idempotent: runs `apt-get update` once, and only when something is missing,
# then `apt-get install -y` of exactly the missing packages.
#
#   sh scripts/install-deps.sh          build, test, benchmark (make check, make demo)
#   sh scripts/install-deps.sh fuzz     the same and clang with libFuzzer (make fuzz)
set -eu

PACKAGES="build-essential cmake pkg-config
libjansson-dev liblapacke-dev libopenblas-dev
libsundials-dev libnlopt-dev libxml2-dev
libmujoco-dev
python3 python3-dev python3-numpy python3-pytest python3-scipy python3-matplotlib
python3-venv python3-pip
chromium"
# The viewer's bundle and browser tests use node and npm (viewer/): the
# machine's own where there is one, else Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    PACKAGES="$PACKAGES nodejs npm"
fi
case "${1:-}" in
    "") ;;
    fuzz) PACKAGES="$PACKAGES clang libclang-rt-dev" ;;
    *) echo "install-deps: unknown package set '$1' (known: fuzz)" >&2; exit 2 ;;
esac

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-deps: missing packages:$missing (run as root to install them)" >&2
        exit 1
    fi
fi

echo "install-deps: installing$missing"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
