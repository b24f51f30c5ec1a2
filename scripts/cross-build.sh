#!/bin/sh
# scripts/cross-build.sh [--native] [BUILD_DIR [CONFIGURE ARGS...]] -
# build memtap for aarch64 with the stub arch (configure
# --with-arch=none): every
# layer above src/arch/ compiled unchanged for another CPU's headers
# and libraries, the proof that the arch interface is all they need
# (doc/ARCHITECTURE.md).  The memtap built traces nothing: it says so
# and exits 1.
#
# Needs Debian's cross compiler and memtap's libraries for arm64 (as
# root):
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install gcc-aarch64-linux-gnu libelf-dev:arm64 libdw-dev:arm64 \
#       libunwind-dev:arm64 zlib1g-dev:arm64 libiberty-dev:arm64
# BUILD_DIR (default build-aarch64, under the source tree) is made and
# configured with --host=aarch64-linux-gnu --with-arch=none
# and the CONFIGURE ARGS (.ci/run gives --enable-werror); then `make memtap`, checked
# to be an aarch64 executable.  MEMTAP_CROSS_ARCH=aarch64 builds the
# arm64 port instead of the stub arch (tests/arm64/memtap.test).
#
# --native: the same stub arch for the machine's own CPU, no cross
# compiler (BUILD_DIR default build-none), so that the stub arch is
# built where the cross compiler is missing too; memtap is then run
# once, and must refuse to trace with "not supported on this CPU".
#
# Exit status: 0 built, 1 failed, 77 the toolchain or a library is
# missing (the reason on stderr).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
native=
if [ "${1:-}" = --native ]; then
	native=1
	shift
fi
build=${1:-$top/build-$([ -n "$native" ] && echo none || echo aarch64)}
[ $# -gt 0 ] && shift
host=aarch64-linux-gnu
pcdir=/usr/lib/$host/pkgconfig

say() { echo "cross-build: $*"; }
skip() { say "$*" >&2; exit 77; }
die() { say "$*" >&2; exit 1; }

if [ -z "$native" ]; then
	command -v $host-gcc > /dev/null || skip "no $host-gcc: apt-get install gcc-$host"
	command -v pkg-config > /dev/null || skip "no pkg-config: apt-get install pkg-config"
	for pc in libelf libdw libunwind-ptrace libunwind-generic zlib; do
		[ -f "$pcdir/$pc.pc" ] || skip "no $pc for arm64 ($pcdir/$pc.pc): see $0's opening comment"
	done
fi

[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi > /dev/null 2>&1) || die "autoreconf failed"
mkdir -p "$build"
cd "$build"
# configured already with the same arguments (the tests share one build
# directory): make alone, which reruns config.status if configure changed
args="${MEMTAP_CROSS_ARCH:-none} $native $*"
if [ -f config.status ] && [ config.status -nt "$top/configure" ] &&
	[ "$(cat cross-build.args 2> /dev/null)" = "$args" ]; then
	say "configured in $build already"
else
	rm -f cross-build.args
	say "configuring in $build"
	if [ -n "$native" ]; then
		"$top/configure" --with-arch=none "$@" > configure.log 2>&1
	else
		# pkg-config reads the arm64 libraries' .pc files only
		PKG_CONFIG_LIBDIR="$pcdir:/usr/share/pkgconfig" \
			"$top/configure" --host=$host --with-arch=${MEMTAP_CROSS_ARCH:-none} "$@" > configure.log 2>&1
	fi || {
		tail -5 configure.log >&2
		die "configure failed (see $build/configure.log and config.log)"
	}
	printf '%s\n' "$args" > cross-build.args
fi
say "building memtap"
nice make -j"$(nproc 2> /dev/null || echo 2)" memtap > make.log 2>&1 || {
	grep -E 'error|undefined' make.log | head -20 >&2
	die "make memtap failed (see $build/make.log)"
}
if [ -n "$native" ]; then
	# it refuses to trace, with one line that says why
	out=$(./memtap -- true 2>&1) && die "memtap -- true exited 0: $out"
	case $out in
	*"not supported on this CPU"*) ;;
	*) die "memtap -- true: $out" ;;
	esac
	say "built $build/memtap with the stub arch: $out"
	exit 0
fi
# e_machine, bytes 18-19 of the ELF header: EM_AARCH64 (183)
[ "$(od -An -tx1 -j18 -N2 memtap | tr -d ' ')" = b700 ] ||
	die "$build/memtap is not an aarch64 executable"
say "built $build/memtap for $host"
