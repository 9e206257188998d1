#!/bin/sh
# make check-install (part of make test): install duet into a temporary prefix and use it as a user
# would, through pkg-config only. Checks
#   - the shared library's soname is libduet.so.SOVERSION (MAJOR, or 0.MINOR while MAJOR is 0, from
#     include/duet/version.h; docs/abi.md) and it exports only the public API (no duet__ internals),
#     with libduet.so.SOVERSION and libduet.so links beside it;
#   - the installed `duet --version` and `pkg-config --modversion duet` are the header's version;
#   - examples/predict.c builds against the prefix with examples/Makefile (PKG_CONFIG_PATH), with
#     README.md's one-liner as printed there, and statically against libduet.a with `pkg-config
#     --static --libs`; each runs with no LD_LIBRARY_PATH (duet.pc puts libdir in the run path), loads
#     the installed library, and predicts a positive makespan no worse than the static default's, equal
#     (to 1e-6) to what the installed CLI's `duet predict` ranks first;
#   - DESTDIR stages the same tree under another root with duet.pc naming the final prefix.
# Environment: MAKE (default make), CC (default cc), PKG_CONFIG (default pkg-config).
set -eu
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

fail() {
    echo "check-install: $*" >&2
    exit 1
}
command -v "$PKG_CONFIG" >/dev/null 2>&1 || fail "needs pkg-config ($PKG_CONFIG); tools/deps.sh installs it"

part() { sed -n "s/^#define DUET_VERSION_$1 \([0-9][0-9]*\).*/\1/p" include/duet/version.h; }
version="$(part MAJOR).$(part MINOR).$(part PATCH)"
if [ "$(part MAJOR)" = 0 ]; then soname="libduet.so.0.$(part MINOR)"; else soname="libduet.so.$(part MAJOR)"; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/duet-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix="$tmp/prefix"
"$MAKE" --no-print-directory install PREFIX="$prefix" >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log" >&2
    fail "make install PREFIX=$prefix failed"
}
lib="$prefix/lib/libduet.so.$version"
[ -f "$lib" ] || fail "$lib is not installed"
[ "$(readlink "$prefix/lib/$soname")" = "libduet.so.$version" ] || fail "$soname does not link to libduet.so.$version"
[ "$(readlink "$prefix/lib/libduet.so")" = "$soname" ] || fail "libduet.so does not link to $soname"
for f in lib/libduet.a include/duet/duet.h include/duet/version.h lib/pkgconfig/duet.pc bin/duet \
    share/doc/duet/LICENSE; do
    [ -f "$prefix/$f" ] || fail "$f is not installed"
done

# The soname, from the dynamic section.
if command -v readelf >/dev/null 2>&1; then
    got=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
else
    got=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
fi
[ "$got" = "$soname" ] || fail "SONAME of $lib is '$got', not '$soname'"
# The exported functions: the public API only.
nexp=$(nm -D --defined-only "$lib" | awk '$2 == "T" { n++ } END { print n + 0 }')
ninternal=$(nm -D --defined-only "$lib" | awk '$3 ~ /^duet__/ { n++ } END { print n + 0 }')
[ "$ninternal" -eq 0 ] || fail "$lib exports $ninternal internal duet__ symbols"
nm -D --defined-only "$lib" | grep -q ' T duet_version$' || fail "$lib does not export duet_version"

# The versions: the CLI's, pkg-config's, the header's.
cli_version=$("$prefix/bin/duet" --version | awk '{ print $2 }')
[ "$cli_version" = "$version" ] || fail "duet --version says '$cli_version', include/duet/version.h '$version'"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc_version=$("$PKG_CONFIG" --modversion duet)
[ "$pc_version" = "$version" ] || fail "pkg-config --modversion duet says '$pc_version', not '$version'"

# The example, three ways.
"$MAKE" --no-print-directory -s -C examples OUT="$tmp" CC="$CC" >"$tmp/example.log" 2>&1 || {
    cat "$tmp/example.log" >&2
    fail "examples/Makefile failed against $prefix"
}
# README.md's line, run as printed (with CC for cc and the output in $tmp).
readme_line=$(grep -m1 '^cc -o predict examples/predict.c ' README.md) || fail "README.md has no 'cc -o predict examples/predict.c' line"
CC="$CC" OUT="$tmp/predict-oneliner" sh -c "$(printf '%s\n' "$readme_line" | sed 's/^cc -o predict /"$CC" -o "$OUT" /')" ||
    fail "README.md's line failed: $readme_line"
# shellcheck disable=SC2046
"$CC" -o "$tmp/predict-static" examples/predict.c $("$PKG_CONFIG" --cflags duet) "$prefix/lib/libduet.a" \
    $("$PKG_CONFIG" --static --libs duet | sed 's/-lduet\>//')
for p in predict predict-oneliner; do
    env -u LD_LIBRARY_PATH ldd "$tmp/$p" | grep -q "$soname => $prefix/lib/$soname" ||
        fail "$p does not load $prefix/lib/$soname without LD_LIBRARY_PATH"
done
if ldd "$tmp/predict-static" | grep -q libduet; then fail "predict-static loads libduet.so"; fi

set -- --hw h200 --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 --world 2 --dtype bf16
# duet predict --json gives microseconds (duet-predict/2); the example prints milliseconds. Its rows are
# ranked by the upper end of each interval, so the fastest prediction is the least pred_us.
want=$("$prefix/bin/duet" predict "$@" --top 0 --json | sed -n 's/.*"pred_us":[[:space:]]*\([0-9.eE+-]*\).*/\1/p' |
    sort -g | head -1)
[ -n "$want" ] || fail "the installed duet predict printed no pred_us"
want=$(awk -v us="$want" 'BEGIN { printf "%.9g", us / 1000 }')
for p in predict predict-oneliner predict-static; do
    env -u LD_LIBRARY_PATH "$tmp/$p" h200 >"$tmp/$p.out" 2>&1 || {
        cat "$tmp/$p.out" >&2
        fail "$p failed"
    }
    best=$(sed -n 's/^best: .*makespan \([0-9.]*\) ms$/\1/p' "$tmp/$p.out")
    dflt=$(sed -n 's/^static default: .*makespan \([0-9.]*\) ms$/\1/p' "$tmp/$p.out")
    awk -v b="$best" -v d="$dflt" -v w="$want" 'BEGIN {
        ok = b > 0 && b <= d && (b - w < 1e-6 * w && w - b < 1e-6 * w); exit ok ? 0 : 1 }' ||
        fail "$p: best makespan '$best' ms, default '$dflt' ms, duet predict's best '$want' ms"
done
echo "  INSTALL $soname ($nexp functions exported, no internals), duet $cli_version; examples/predict (shared," \
    "README's one-liner, static; no LD_LIBRARY_PATH) best $best ms = duet predict's $want ms, static default $dflt ms"

# DESTDIR: the same tree under a staging root; duet.pc names the final prefix.
"$MAKE" --no-print-directory install DESTDIR="$tmp/stage" PREFIX=/opt/duet >"$tmp/stage.log" 2>&1 || {
    cat "$tmp/stage.log" >&2
    fail "make install DESTDIR=$tmp/stage PREFIX=/opt/duet failed"
}
[ -f "$tmp/stage/opt/duet/lib/libduet.so.$version" ] || fail "DESTDIR: no $tmp/stage/opt/duet/lib/libduet.so.$version"
grep -qx 'prefix=/opt/duet' "$tmp/stage/opt/duet/lib/pkgconfig/duet.pc" || fail "DESTDIR: duet.pc's prefix is not /opt/duet"
