#!/bin/sh
# Install the Debian/Ubuntu packages duet needs, if any are missing.
#   tools/deps.sh [cpu|amd|mpi|fuzz]...   (default: cpu)
# amd: ROCm 5.2's hipcc (gfx90a) and clang 19 with its linker and offload bundler (gfx942), for make check-amd.
# fuzz: clang and its runtime libraries (libFuzzer, ASan, UBSan) for `make fuzz` / `make fuzz-smoke`.
# As root it runs apt-get; otherwise it prints the exact command and exits 1, changing nothing.
set -eu

want=""
[ $# -eq 0 ] && set -- cpu
for group in "$@"; do
    case "$group" in
        cpu) want="$want libcjson-dev libcriterion-dev libgsl-dev python3" ;;
        amd) want="$want hipcc libamdhip64-dev clang-19 lld-19 clang-tools-19" ;;
        mpi) want="$want libopenmpi-dev" ;;
        fuzz) want="$want clang libclang-rt-dev" ;;
        *) echo "deps.sh: unknown package group '$group' (cpu, amd, mpi, fuzz)" >&2; exit 2 ;;
    esac
done

missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "duet: deps: missing packages:$missing, and this system has no apt-get; install them by hand" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "duet: deps: missing packages:$missing" >&2
    echo "duet: deps: run as root:  $cmd" >&2
    exit 1
fi
echo "duet: deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet: update once and retry.
if ! $cmd >/tmp/duet-deps.log 2>&1; then
    apt-get update >>/tmp/duet-deps.log 2>&1 || true
    if ! $cmd >>/tmp/duet-deps.log 2>&1; then
        tail -20 /tmp/duet-deps.log >&2
        echo "duet: deps: '$cmd' failed (log: /tmp/duet-deps.log)" >&2
        exit 1
    fi
fi
