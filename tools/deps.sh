#!/bin/sh
# Install the Debian/Ubuntu packages duet needs, if any are missing.
#   tools/deps.sh [cpu|amd|mpi|fuzz|cov]...   (default: cpu)
# amd: ROCm 5.2's hipcc (gfx90a) and clang 19 with its linker and offload bundler (gfx942), for make check-amd.
# fuzz: clang and its runtime libraries (libFuzzer, ASan, UBSan) for `make fuzz` / `make fuzz-smoke`.
# cov: gcovr (over gcc's gcov) for `make coverage`.
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
        cov) want="$want gcovr" ;;
        *) echo "deps.sh: unknown package group '$group' (cpu, amd, mpi, fuzz, cov)" >&2; exit 2 ;;
    esac
done
# pkg-config finds the libraries on any layout, and make test builds examples/ through it.
case " $* " in *" cpu "*) want="$want pkg-config" ;; esac

# This is the convenience behind README's `make test` and `make demo` on Debian, never the only way: a
# dependency counts as present, whatever installed it, when pkg-config finds its library (a
# distribution's layout, Spack, a prefix on PKG_CONFIG_PATH) or its program is on PATH; only then is
# the Debian package database asked, and nothing is installed when every dependency is present.
# probe names that sign: a pkg-config module (pc:NAME) or a program (cmd:NAME); packages without one
# (runtime libraries) are looked up in dpkg alone.
probe() {
    case "$1" in
        libcjson-dev) echo pc:libcjson ;;
        libgsl-dev) echo pc:gsl ;;
        libcriterion-dev) echo pc:criterion ;;
        python3 | clang | hipcc | pkg-config | gcovr) echo "cmd:$1" ;;
        libopenmpi-dev) echo cmd:mpicc ;;
        *) echo none ;;
    esac
}
present() {
    how=$(probe "$1")
    case "$how" in
        pc:*) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "${how#pc:}" && return 0 ;;
        cmd:*) command -v "${how#cmd:}" >/dev/null 2>&1 && return 0 ;;
    esac
    command -v dpkg-query >/dev/null 2>&1 &&
        dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=""
for p in $want; do
    present "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "duet: deps: missing (Debian package names):$missing, and this system has no apt-get; install them" \
        "and make pkg-config find their .pc files (PKG_CONFIG_PATH), or put their programs on PATH" >&2
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
