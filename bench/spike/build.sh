#!/bin/sh
# bench/spike/build.sh - build detour-spike and spike-loop into DIR
# (default: BUILDDIR/bench/spike, out of the source tree, which `make
# dist` copies whole), against memtap's configured build tree BUILDDIR
# (default: the source tree's build/, for config.h).
#
#   bench/spike/build.sh [DIR [BUILDDIR]]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${2:-$top/build}
out=${1:-$builddir/bench/spike}
cc=${CC:-cc}
cflags="-O2 -g -Wall -Wextra -Werror -std=gnu11"
[ -f "$builddir/config.h" ] || { echo "build.sh: no $builddir/config.h: configure memtap first" >&2; exit 1; }
mkdir -p "$out"
# $cflags: several words
# shellcheck disable=SC2086
$cc $cflags -I"$builddir" -I"$top/src" -I"$top/src/linux/x86_64" -I"$top/src/probe/x86_64" -I"$here" \
	-o "$out/detour-spike" \
	"$here/detour.c" "$here/patch.c" "$here/ring.c" "$here/stubs.S" \
	"$top"/src/probe/elfsym*.c "$top/src/probe/remote.c" "$top/src/probe/sandbox.c" "$top/src/probe/hole.c" \
	"$top"/src/linux/*.c "$top/src/util/error.c" "$top/src/util/xmalloc.c" \
	"$top/src/probe/x86_64/bp_arch.c" \
	-lelf -lZydis -lm
$cc -O2 -Wall -Wextra -Werror -fPIE -pie -pthread -o "$out/spike-loop" "$here/spike-loop.c"
