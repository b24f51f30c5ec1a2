#!/bin/sh
# bench/run.sh - build memtap where needed and run the benchmark suites.
#
# Usage: bench/run.sh [--builddir=DIR] [--suites=LIST] [--] [SUITE OPTIONS]
#
# Expects a configured tree (./configure has run in DIR, by default the
# directory above bench/); runs `make memtap` there, then each suite
# (default: all, i.e. syscalls,stacks,alloc) with the remaining options.  Every
# suite accepts -r, -s, -m, --pin, --workdir, --keep and --cc; for the
# others run one suite (see bench/SUITE.sh --help).  Tables go to
# stdout, progress to stderr.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
builddir=$here/..
suites="syscalls stacks alloc"

while [ $# -gt 0 ]; do
	case $1 in
	--builddir=*) builddir=${1#*=} ;;
	--suites=*) suites=$(echo "${1#*=}" | tr ',' ' ') ;;
	--) shift; break ;;
	-h | --help)
		sed -n '2,12s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*) break ;;
	esac
	shift
done

if [ ! -f "$builddir/Makefile" ]; then
	echo "run.sh: no Makefile in $builddir: run ./configure first (or pass --builddir)" >&2
	exit 1
fi
make -C "$builddir" memtap >&2
memtap=$(cd "$builddir" && pwd)/memtap

for suite in $suites; do
	if [ ! -f "$here/$suite.sh" ]; then
		echo "run.sh: no such suite: $suite" >&2
		exit 64
	fi
	MEMTAP=$memtap bash "$here/$suite.sh" "$@"
done
