#!/bin/bash
# bench/ab.sh - two memtap binaries on the same workloads, interleaved:
# is a change of memtap's code a change of its cost?
#
#   bench/ab.sh [-r N] [-w LIST] [--builddir=DIR] OLD NEW
#
# Every repetition runs the workload untraced, under OLD and under NEW,
# in an order that rotates, so that a slow spell of a shared machine
# hits all three alike.  A row gives the medians of traced/untraced for
# OLD and NEW and of NEW/OLD per repetition (1.00: no change; the
# spread of that column across repetitions is the noise: see the
# min-max column).  Output: Markdown on stdout, progress on stderr.
# Not a pass/fail test.

set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

reps=7
workloads="mmap mmap-ptrace dd-ptrace stacks alloc sampled exact"
builddir=$here/..
workdir=
keep=no
cc=${CC:-cc}

usage() {
	cat <<EOF
Usage: $prog [OPTIONS] OLD NEW
Cost of two memtap binaries on the same workloads, interleaved.

  -r N               repetitions [$reps]
  -w LIST            some of: $workloads
  --builddir=DIR     a configured build with tests/targets/alloc-loop
                     (make check TESTS=) [$builddir]
  -h, --help         show this help and exit

Workloads:
  mmap         mmapper 5000: 10,300 seccomp stops (memtap -q)
  mmap-ptrace  the same, --syscalls=ptrace (PTRACE_SYSCALL stops)
  dd-ptrace    dd bs=512 count=20000 under --syscalls=ptrace: 40,000
               syscalls memtap stops at and lets go
  stacks       mmapper 2000 with DWARF stacks (--unwind=dwarf)
  alloc        alloc-loop -t 1 -n 2000 under -e malloc,free (int3)
  sampled      alloc-loop -t 1 -n 200000 under -e alloc (detours, sampled)
  exact        alloc-loop -t 1 -n 200000 under -e alloc --exact
  exact4       alloc-loop -t 4 -n 200000 under -e alloc --exact (4 threads
               of 200,000 iterations: memtap and the loop share the CPUs)
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	-r) reps=$2; shift 2 ;;
	-w) workloads=${2//,/ }; shift 2 ;;
	--builddir=*) builddir=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || { usage >&2; exit 64; }
old=$1 new=$2
for b in "$old" "$new"; do
	[ -x "$b" ] || die "not executable: $b"
done
case $reps in '' | *[!0-9]* | 0) die "bad -r: $reps" ;; esac

make_workdir memtap-ab
$cc -O2 -o "$workdir/bin/mmapper" "$here/workloads/mmapper.c" || die "cannot build mmapper"
loop=$builddir/tests/targets/alloc-loop

# the workload's command line and memtap's options: sets cmd and mopts
setup() {
	case $1 in
	mmap) cmd=("$workdir/bin/mmapper" 5000) mopts=() ;;
	mmap-ptrace) cmd=("$workdir/bin/mmapper" 5000) mopts=(--syscalls=ptrace) ;;
	dd-ptrace)
		cmd=(dd if=/dev/zero of=/dev/null bs=512 count=20000)
		mopts=(--syscalls=ptrace) ;;
	stacks) cmd=("$workdir/bin/mmapper" 2000) mopts=(--unwind=dwarf) ;;
	alloc)
		[ -x "$loop" ] || die "no $loop: run make check TESTS= in $builddir"
		cmd=("$loop" -t 1 -n 2000) mopts=(-e malloc,free) ;;
	sampled | exact)
		[ -x "$loop" ] || die "no $loop: run make check TESTS= in $builddir"
		cmd=("$loop" -t 1 -n 200000) mopts=(-e alloc)
		[ "$1" = sampled ] || mopts+=(--exact) ;;
	exact4)
		[ -x "$loop" ] || die "no $loop: run make check TESTS= in $builddir"
		cmd=("$loop" -t 4 -n 200000) mopts=(-e alloc --exact) ;;
	*) die "unknown workload: $1" ;;
	esac
}

# "WALL CPU" in ms of one run of the array run_cmd (CPU: user + system
# time of memtap and the workload together); dies when it fails
timed() {
	local TIMEFORMAT='%3R %3U %3S' t
	t=$({ time "${run_cmd[@]}" >"$workdir/out/last" 2>&1 </dev/null; } 2>&1) ||
		die "failed: ${run_cmd[*]} ($(tail -n 1 "$workdir/out/last"))"
	echo "$t" | awk '{ printf "%.0f %.0f", $1 * 1000, ($2 + $3) * 1000 }'
}

echo "# memtap A/B: $old (OLD) against $new (NEW)"
echo
echo "- $reps repetitions, order rotating; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| workload | OLD/untraced | NEW/untraced | NEW/OLD wall | min-max | NEW/OLD CPU | min-max |"
echo "|---|---|---|---|---|---|---|"
for w in $workloads; do
	setup "$w"
	: > "$workdir/out/$w"
	for ((r = 0; r < reps; r++)); do
		declare -A t=()
		for k in 0 1 2; do
			case $(((r + k) % 3)) in
			0) run_cmd=("${cmd[@]}"); t[u]=$(timed) ;;
			1) run_cmd=("$old" -q "${mopts[@]}" -o /dev/null -- "${cmd[@]}"); t[o]=$(timed) ;;
			2) run_cmd=("$new" -q "${mopts[@]}" -o /dev/null -- "${cmd[@]}"); t[n]=$(timed) ;;
			esac
		done
		echo "${t[u]} ${t[o]} ${t[n]}" >> "$workdir/out/$w"
		log "$w rep $((r + 1)): ms wall, CPU: untraced ${t[u]}, OLD ${t[o]}, NEW ${t[n]}"
	done
	# fields: untraced wall, CPU; OLD wall, CPU; NEW wall, CPU
	awk "$awk_median"'
		{ o[NR] = $3 / ($1 ? $1 : 1); n[NR] = $5 / ($1 ? $1 : 1)
		  d[NR] = $5 / ($3 ? $3 : 1); c[NR] = $6 / ($4 ? $4 : 1)
		  if (NR == 1 || d[NR] < dlo) dlo = d[NR]; if (NR == 1 || d[NR] > dhi) dhi = d[NR]
		  if (NR == 1 || c[NR] < clo) clo = c[NR]; if (NR == 1 || c[NR] > chi) chi = c[NR] }
		END { printf "| %s | %.2f | %.2f | %.3f | %.3f-%.3f | %.3f | %.3f-%.3f |\n", w,
			median(o, NR), median(n, NR), median(d, NR), dlo, dhi,
			median(c, NR), clo, chi }' w="$w" "$workdir/out/$w"
done
