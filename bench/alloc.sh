#!/bin/bash
# bench/alloc.sh - what probing the allocator costs a command: memtap's
# int3 probes on malloc, calloc, realloc and free, against ltrace,
# heaptrack and valgrind massif, measured in the same run.
#
# Each measurement is a pair: the malloc/free loop untraced and the
# same loop under one tool, run back to back (the order flips on every
# repetition), and the pairs of all tools and thread counts are
# interleaved.  A cell is the median over the repetitions of
# traced/untraced, and of (traced - untraced) / hits, where hits are the
# loop's calls of the functions that the tool intercepts.  The floor is
# the bare int3 round trip, on an empty function, in the same run.
#
# Output: Markdown on stdout.  Progress goes to stderr.

# The awk expressions given to median_of are single-quoted on purpose.
# shellcheck disable=SC2016

set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

reps=9
scale=1
memtap=${MEMTAP:-}
threads_list="1 8"
pin=
tools="floor memtap-none memtap-dwarf memtap-exact memtap-ovh5 memtap-mf memtap-int3 memtap-min1m ltrace heaptrack massif"
workdir=
keep=no
cc=${CC:-cc}
workloads="python3 sqlite3"
# the tools measured on the workloads (those of --tools among them)
wl_tools="memtap-int3 memtap-exact memtap-dwarf memtap-min1m heaptrack ltrace"

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]
Slowdown of allocator tracing: memtap's breakpoints on malloc, calloc,
realloc and free, against ltrace, heaptrack and valgrind massif, on the
same malloc/free loop with 1 and 8 threads; the bare int3 round trip as
the floor; memtap's malloc count checked against the loop's.

  -r, --reps=N         repetitions (pairs untraced/traced) per cell [$reps]
  -s, --scale=F        multiply every loop size by F (e.g. 0.3, 2) [$scale]
  -m, --memtap=PATH    memtap binary [\$MEMTAP, else ../memtap next to
                       bench/, else memtap in PATH]
  -T, --threads=LIST   thread counts of the loop [1,8]
  -t, --tools=LIST     some of: ${tools// /,}
                       (tools that are not installed are skipped)
      --workdir=DIR    build the loop and keep outputs in DIR
                       (default: a temporary directory, removed at exit)
      --keep           do not remove the temporary directory
      --cc=CC          C compiler for the loop [$cc]
      --pin=CPU        run everything (tools and loop) on CPU CPU
                       (taskset): tracer and tracee share it [not pinned]
  -w, --workloads=LIST programs measured besides the loop, some of:
                       python3,sqlite3, or none [${workloads// /,}]
                       (skipped with a message when not installed)
  -h, --help           show this help and exit

The loop is tests/targets/alloc-loop.c: each thread runs N/THREADS
iterations of malloc, calloc, realloc, free, free and prints the calls
it made.  Sizes (total iterations at scale 1; each tool's runs are
paired with untraced runs of that same size):
  memtap --probes=int3 10,000     ltrace               600
  memtap (in-target), heaptrack, massif 500,000 (the same loop)
  floor (empty_fn)  50,000 calls
Every tool also has a start-up cell (1 thread, 0 iterations).

Workloads (whole programs, N at scale 1), each paired with its untraced
run under ${wl_tools// /, } (those of --tools):
  python3   a dict of N strings, N/10 bytes objects up to 5,000 bytes,
            sorted: python3 -c PROGRAM N                     N = 100,000
  sqlite3   an in-memory table of N rows of random blobs, an index on
            them, a GROUP BY: sqlite3 :memory: SQL            N =  50,000

Tools:
  floor         the int3 round trip on empty_fn: memtap --unwind=none
                --probe empty_fn -e probe, and tests/unit/bp-harness
                -s empty_fn when it is built (make check TESTS=)
  memtap-none   memtap -e alloc --unwind=none -F folded -o FILE
  memtap-dwarf  memtap -e alloc -F folded -o FILE (DWARF stacks; in-target
                probes, sampled at 128 KiB: the defaults)
  memtap-exact  memtap --exact -e alloc -F folded -o FILE (every call)
  memtap-ovh5   memtap --overhead 5 -e alloc -F folded -o FILE (the mean
                adapted to a 5% budget)
  memtap-mf     memtap -e malloc,free -F folded -o FILE (DWARF stacks)
  memtap-int3   memtap --probes=int3 -e alloc -F folded -o FILE
  memtap-min1m  memtap -e malloc --min-size 1M -F folded -o FILE (nothing
                kept: the stubs' filter alone)
  ltrace        ltrace -f -e malloc+free -o /dev/null
  heaptrack     heaptrack -o FILE
  massif        valgrind --tool=massif --massif-out-file=FILE

The default run takes about 5 minutes on a 2-CPU VM.
Example: $prog -r 9 -t memtap-none,memtap-dwarf,heaptrack
EOF
}

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		arg=${opt#*=}
		opt=${opt%%=*}
		;;
	-[rsmtTw])
		[ $# -ge 2 ] || die "option $opt needs an argument"
		arg=$2
		shift
		;;
	-[rsmtTw]?*)
		arg=${opt#-?}
		opt=${opt%"$arg"}
		;;
	--reps | --scale | --memtap | --threads | --tools | --workdir | --cc | --pin | --workloads)
		[ $# -ge 2 ] || die "option $opt needs an argument"
		arg=$2
		shift
		;;
	*)
		arg=
		;;
	esac
	case $opt in
	-r | --reps) reps=$arg ;;
	-s | --scale) scale=$arg ;;
	-m | --memtap) memtap=$arg ;;
	-T | --threads) threads_list=${arg//,/ } ;;
	-t | --tools) tools=${arg//,/ } ;;
	--workdir) workdir=$arg ;;
	--cc) cc=$arg ;;
	--pin) pin=$arg ;;
	-w | --workloads) workloads=${arg//,/ } ;;
	-h | --help)
		usage
		exit 0
		;;
	--keep) keep=yes ;;
	*)
		usage >&2
		exit 64
		;;
	esac
	shift
done

case $reps in
'' | *[!0-9]*) die "--reps: not a number: $reps" ;;
esac
[ "$reps" -ge 1 ] || die "--reps must be at least 1"
awk -v s="$scale" 'BEGIN { exit !(s + 0 > 0) }' || die "--scale: not a positive number: $scale"
for th in $threads_list; do
	case $th in
	'' | *[!0-9]* | 0) die "--threads: not a positive number: $th" ;;
	esac
done
[ "$workloads" != none ] || workloads=
for w in $workloads; do
	case $w in
	python3 | sqlite3) ;;
	*) die "--workloads: unknown workload: $w (python3, sqlite3 or none)" ;;
	esac
done

find_memtap
memtap=$(cd "$(dirname "$memtap")" && pwd)/${memtap##*/}
harness=$(dirname "$memtap")/tests/unit/bp-harness

make_workdir memtap-bench

# --- the loop ----------------------------------------------------------

src=$here/../tests/targets/alloc-loop.c
[ -f "$src" ] || die "no $src"
# as mk/breakpoint.am builds it: PIE, -O2, no frame pointers
"$cc" -O2 -g -Wall -Wextra -fPIE -pie -pthread -o "$workdir/bin/alloc-loop" "$src" ||
	die "cannot build $src"
"$cc" -O2 -Wall -Wextra -o "$workdir/bin/cputime" "$here/workloads/cputime.c" ||
	die "cannot build $here/workloads/cputime.c"
loop=$workdir/bin/alloc-loop
cputime=$workdir/bin/cputime

# total iterations of a tool at scale 1 (the floor: calls of empty_fn)
base_size() {
	case $1 in
	floor | floor-harness) echo 50000 ;;
	memtap-int3) echo 10000 ;;
	ltrace) echo 600 ;;
	# the in-target probes and the preloaded tools on the same loop
	memtap-* | heaptrack | massif) echo 500000 ;;
	esac
}

# size_for TOOL THREADS: iterations per thread (0 for start-up, THREADS=0)
size_for() {
	[ "$2" -gt 0 ] || {
		echo 0
		return
	}
	awk -v b="$(base_size "$1")" -v s="$scale" -v t="$2" \
		'BEGIN { n = int(b * s / t + 0.5); print (n < 1 ? 1 : n) }'
}

# loop_cmd TOOL THREADS N: sets the array cmd (THREADS 0: start-up)
loop_cmd() {
	case $1 in
	floor*) cmd=("$loop" -e -n "$3") ;;
	*) cmd=("$loop" -t "$(($2 > 0 ? $2 : 1))" -n "$3") ;;
	esac
}

# hits per iteration: the loop's calls of the functions a tool intercepts
hits_per_iter() {
	case $1 in
	floor*) echo 1 ;;
	memtap-mf | ltrace) echo 3 ;; # malloc, free, free
	memtap-min1m) echo 1 ;;       # malloc
	*) echo 5 ;;                  # malloc, calloc, realloc, free, free
	esac
}

# --- the workloads -----------------------------------------------------

# allocation-heavy Python: small strings (pymalloc), larger bytes
# objects and the dict's growth (malloc), a sort
py_prog='import sys
n = int(sys.argv[1])
d = {}
for i in range(n):
    d[i] = "x" * (i % 200) + str(i)
b = [bytes(i % 5000) for i in range(n // 10)]
print(len(d), len(b), len(sorted(d.values())))'

# wl_size WORKLOAD: N at the scale
wl_size() {
	local b
	case $1 in
	python3) b=100000 ;;
	sqlite3) b=50000 ;;
	esac
	awk -v b="$b" -v s="$scale" 'BEGIN { n = int(b * s + 0.5); print (n < 1 ? 1 : n) }'
}

# wl_cmd WORKLOAD N: sets the array cmd
wl_cmd() {
	case $1 in
	python3) cmd=("$python3" -c "$py_prog" "$2") ;;
	sqlite3)
		cmd=(sqlite3 :memory: "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $2)
INSERT INTO t SELECT x, randomblob(16 + x % 500) FROM c;
CREATE INDEX tb ON t(b);
SELECT a % 10, count(*), sum(length(b)) FROM t GROUP BY a % 10 LIMIT 1;")
		;;
	esac
}

# --- tools -------------------------------------------------------------

tool_label() {
	case $1 in
	floor) echo "floor: memtap --probe empty_fn (1 stop)" ;;
	floor-harness) echo "floor: bp-harness -s empty_fn (1 stop)" ;;
	memtap-none) echo "memtap -e alloc --unwind=none" ;;
	memtap-dwarf) echo "memtap -e alloc (dwarf, sampled)" ;;
	memtap-exact) echo "memtap --exact -e alloc (dwarf)" ;;
	memtap-ovh5) echo "memtap --overhead 5 -e alloc (dwarf)" ;;
	memtap-mf) echo "memtap -e malloc,free (dwarf)" ;;
	memtap-int3) echo "memtap --probes=int3 -e alloc (dwarf)" ;;
	memtap-min1m) echo "memtap -e malloc --min-size 1M" ;;
	ltrace) echo "ltrace -e malloc+free" ;;
	heaptrack) echo "heaptrack" ;;
	massif) echo "valgrind --tool=massif" ;;
	esac
}

# tool_prefix TOOL OUTFILE: sets the array pre
tool_prefix() {
	case $1 in
	floor) pre=("$memtap" --unwind=none --probe empty_fn -e probe -o "$2" --) ;;
	floor-harness) pre=("$harness" -s empty_fn -o "$2" --) ;;
	memtap-none) pre=("$memtap" -e alloc --unwind=none -F folded -o "$2" --) ;;
	memtap-dwarf) pre=("$memtap" -v -e alloc -F folded -o "$2" --) ;;
	memtap-exact) pre=("$memtap" -v --exact -e alloc -F folded -o "$2" --) ;;
	memtap-ovh5) pre=("$memtap" -v --overhead 5 -e alloc -F folded -o "$2" --) ;;
	memtap-mf) pre=("$memtap" -e "malloc,free" -F folded -o "$2" --) ;;
	memtap-int3) pre=("$memtap" --probes=int3 -e alloc -F folded -o "$2" --) ;;
	memtap-min1m) pre=("$memtap" -v -e malloc --min-size 1M -F folded -o "$2" --) ;;
	ltrace) pre=(ltrace -f -e malloc+free -o /dev/null) ;;
	heaptrack) pre=(heaptrack -o "$2") ;;
	massif) pre=(valgrind --tool=massif "--massif-out-file=$2") ;;
	esac
}

tool_binary() {
	case $1 in
	floor-harness) echo "$harness" ;;
	floor | memtap*) echo "$memtap" ;;
	massif) echo valgrind ;;
	*) echo "$1" ;;
	esac
}

tool_version() {
	case $1 in
	memtap*) "$memtap" --version 2>&1 | head -n 1 ;;
	ltrace) ltrace -V 2>&1 | head -n 1 ;;
	heaptrack) heaptrack --version 2>&1 | head -n 1 ;;
	massif) valgrind --version 2>&1 | head -n 1 ;;
	esac
}

skipped=
active=
for t in $tools; do
	[ -n "$(tool_label "$t")" ] || die "unknown tool: $t"
	[ "$t" != floor ] || tools_floor=yes
	if command -v "$(tool_binary "$t")" >/dev/null 2>&1; then
		active="$active $t"
	else
		skipped="$skipped $t"
	fi
done
if [ "${tools_floor:-}" = yes ]; then
	if [ -x "$harness" ]; then
		active="$active floor-harness"
	else
		skipped="$skipped floor-harness"
	fi
fi
"$memtap" --help 2>&1 | grep -q 'group alloc' ||
	die "$memtap has no allocator probes (-e alloc)"

# the workloads installed, and the tools run on them
wl_active=
wl_skipped=
python3=
for w in $workloads; do
	if ! command -v "$w" >/dev/null 2>&1; then
		wl_skipped="$wl_skipped $w"
		log "$w is not installed: its workload is skipped"
		continue
	fi
	# python3 may be a wrapper script (pyenv): trace the interpreter itself
	[ "$w" != python3 ] || python3=$(python3 -c 'import sys; print(sys.executable)')
	wl_active="$wl_active $w"
done
wl_run=
for t in $wl_tools; do
	case " $active " in *" $t "*) wl_run="$wl_run $t" ;; esac
done

# --- measuring ---------------------------------------------------------

# timed LOG SAMPLES CMD...: runs CMD under cputime with its output in
# LOG; appends "wall_us self_user self_sys child_user child_sys" to
# SAMPLES; fails when the command does
timed() {
	local out=$1 samples=$2
	shift 2
	"$cputime" "$samples" "$@" >"$out" 2>&1 </dev/null
}

# parse_memtap LOG: sets m_stops (from the summary line) and m_malloc
# (calls of malloc counted by the stubs, -v; else in the summary table,
# an estimate when sampled; empty when not probed), m_kept (records
# made by the stubs, -v)
parse_memtap() {
	m_stops=$(sed -n 's/^memtap: .* \([0-9][0-9]*\) stops (.*/\1/p' "$1" | head -n 1)
	m_malloc=$(sed -n 's/.*: malloc: \([0-9]*\) calls .* in its stub.*/\1/p' "$1" | head -n 1)
	[ -n "$m_malloc" ] ||
		m_malloc=$(awk '$1 == "malloc" && $2 ~ /^[0-9]+$/ { n += $2; f = 1 } END { if (f) print n }' "$1")
	m_kept=$(sed -n 's/.* in its stub, \([0-9]*\) recorded.*/\1/p' "$1" |
		awk '{ n += $1 } END { print n + 0 }')
}

# the loop's own count of malloc calls (EXPECT malloc N BYTES)
loop_malloc() {
	awk '$1 == "EXPECT" && $2 == "malloc" { print $3 }' "$1"
}

declare -A failed lastfail
# run_pair REP OUT CELL WHAT: the array cmd untraced (times appended to
# OUT.u, output in OUT.untraced) and after the array pre (OUT.t,
# OUT.log), in an order that flips with REP; a failure is counted for
# CELL and said (WHAT failed), and returns 1
run_pair() {
	local rep=$1 out=$2 cell=$3 rc=0 pinned=()
	[ -z "$pin" ] || pinned=(taskset -c "$pin")
	rm -f "$out.u" "$out.t"
	if [ $((rep % 2)) -eq 1 ]; then
		timed "$out.untraced" "$out.u" "${pinned[@]}" "${cmd[@]}" || rc=$?
		timed "$out.log" "$out.t" "${pinned[@]}" "${pre[@]}" "${cmd[@]}" || rc=$?
	else
		timed "$out.log" "$out.t" "${pinned[@]}" "${pre[@]}" "${cmd[@]}" || rc=$?
		timed "$out.untraced" "$out.u" "${pinned[@]}" "${cmd[@]}" || rc=$?
	fi
	[ $rc -ne 0 ] || return 0
	# count it and go on: a tool that crashes its target now and then
	# still has a cost to show
	failed[$cell]=$((${failed[$cell]:-0} + 1))
	lastfail[$cell]="exit status $rc"
	mv "$out.log" "$workdir/out/$cell.failed.$rep.log" 2>/dev/null || true
	log "$4 failed: exit status $rc (log: $workdir/out/$cell.failed.$rep.log)"
	rm -f "$out.data"* "$out.u" "$out.t" "$out.untraced"
	return 1
}

# pair REP TOOL THREADS (THREADS 0: the start-up cell)
pair() {
	local rep=$1 t=$2 th=$3 n out cell
	cell=$t.$th
	n=$(size_for "$t" "$th")
	out=$workdir/out/$cell.$rep
	loop_cmd "$t" "$th" "$n"
	tool_prefix "$t" "$out.data"
	run_pair "$rep" "$out" "$cell" "$(tool_label "$t") with $th threads" || return 0
	# untraced: wall; traced: wall, tracer (self) CPU, target (children) CPU
	read -r uw _ <"$out.u"
	read -r tw su ss cu cs rq <"$out.t"
	parse_memtap "$out.log"
	if [ "$t" = floor-harness ]; then
		m_stops=$(sed -n 's/^STATS entries=\([0-9]*\) returns=\([0-9]*\).*/\1 \2/p' "$out.data" |
			awk '{ print $1 + $2 }')
	fi
	[ "$t" != floor ] || parse_memtap "$out.data"
	lm=$(loop_malloc "$out.untraced")
	echo "$uw $tw $su $ss $cu $cs ${m_stops:-0} ${m_malloc:--} ${lm:--} ${rq:-0} ${m_kept:-0}" \
		>>"$workdir/samples/$cell"
	# keep the last repetition's outputs for the checks
	if [ "$rep" -eq "$reps" ]; then
		for f in "$out.data"*; do
			[ ! -e "$f" ] || mv "$f" "$workdir/out/$cell.last${f#"$out.data"}"
		done
	fi
	rm -f "$out.data"* "$out.u" "$out.t"
	[ "$keep" = yes ] || rm -f "$out.untraced" "$out.log"
}

# wl_pair REP WORKLOAD TOOL: one pair, untraced and under TOOL
wl_pair() {
	local rep=$1 w=$2 t=$3 cell out
	cell=wl.$w.$t
	out=$workdir/out/$cell.$rep
	wl_cmd "$w" "$(wl_size "$w")"
	tool_prefix "$t" "$out.data"
	run_pair "$rep" "$out" "$cell" "$(tool_label "$t") on $w" || return 0
	read -r uw _ <"$out.u"
	read -r tw _ <"$out.t"
	parse_memtap "$out.log"
	echo "$uw $tw ${m_malloc:--} ${m_kept:-0}" >>"$workdir/samples/$cell"
	rm -f "$out.data"* "$out.u" "$out.t"
	[ "$keep" = yes ] || rm -f "$out.untraced" "$out.log"
}

# --- run ---------------------------------------------------------------

start=$(now_us)
load0=$(cut -d ' ' -f 1-3 /proc/loadavg)
for rep in $(seq 1 "$reps"); do
	log "repetition $rep/$reps"
	for t in $active; do
		case $t in
		floor*) ths=1 ;;
		*) ths="0 $threads_list" ;;
		esac
		for th in $ths; do
			pair "$rep" "$t" "$th"
		done
	done
	for w in $wl_active; do
		for t in $wl_run; do
			wl_pair "$rep" "$w" "$t"
		done
	done
done
load1=$(cut -d ' ' -f 1-3 /proc/loadavg)

# correctness runs, outside the timing
declare -A check
memtap_check() { # THREADS: malloc stacks through the loop (calls, bytes)
	local th=$1 n f
	n=$(size_for memtap-dwarf "$th")
	f=$workdir/out/check.$th
	"$memtap" --exact -e alloc --weight=count -F folded -o "$f.count" -- \
		"$loop" -t "$th" -n "$n" >"$f.loop" 2>"$f.log" </dev/null || return 0
	"$memtap" --exact -e alloc -F folded -o "$f.bytes" -- \
		"$loop" -t "$th" -n "$n" >"$f.loop2" 2>"$f.log2" </dev/null || return 0
	# [malloc];comm;...;worker;one;malloc COUNT: the loop's; the rest: libc's
	check[$th:loop]=$(awk '/^\[malloc\];/ && /;worker;/ { n += $NF } END { print n + 0 }' "$f.count")
	check[$th:other]=$(awk '/^\[malloc\];/ && !/;worker;/ { n += $NF } END { print n + 0 }' "$f.count")
	check[$th:bytes]=$(awk '/^\[malloc\];/ && /;worker;/ { n += $NF } END { print n + 0 }' "$f.bytes")
	check[$th:expect]=$(loop_malloc "$f.loop")
	check[$th:ebytes]=$(awk '$1 == "EXPECT" && $2 == "malloc" { print $4 }' "$f.loop2")
}
ltrace_check() { # THREADS: malloc calls ltrace printed
	local th=$1 n f
	n=$(size_for ltrace "$th")
	f=$workdir/out/ltrace-check.$th
	local rc=0 lm
	ltrace -f -e malloc+free -o "$f" "$loop" -t "$th" -n "$n" >"$f.loop" 2>&1 </dev/null || rc=$?
	lm=$(loop_malloc "$f.loop")
	[ $rc -eq 0 ] || lm="$lm (target's exit status $rc)"
	check[lt$th]="$(grep -c -- '->malloc(' "$f" || true)/$lm"
}
heaptrack_check() { # THREADS: allocation calls heaptrack recorded
	local th=$1 f=
	for f in "$workdir/out/heaptrack.$th.last"*; do
		break
	done
	[ -f "$f" ] && command -v heaptrack_print >/dev/null 2>&1 || return 0
	check[ht$th]=$(timeout 120 heaptrack_print -f "$f" -p 0 -a 0 -T 0 -l 0 -n 0 -s 0 2>/dev/null |
		sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
}
case " $active " in *" memtap-"*)
	for th in $threads_list; do
		log "checking memtap's malloc stacks, $th threads"
		memtap_check "$th"
	done
	;;
esac
case " $active " in *" ltrace "*)
	for th in $threads_list; do
		log "checking ltrace's malloc count, $th threads"
		ltrace_check "$th"
	done
	;;
esac
case " $active " in *" heaptrack "*)
	for th in $threads_list; do heaptrack_check "$th"; done
	;;
esac
elapsed=$((($(now_us) - start) / 1000000))

# --- report ------------------------------------------------------------

# stats FILE HITS STOPS0: median untraced s, median traced s, median
# ratio, min ratio, max ratio, median added ms, spread of the untraced
# runs (max/min), best (min traced / min untraced), median ns per hit
stats() {
	awk -v hits="$2" '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) {
			t = a[i]
			for (j = i - 1; j >= 1 && a[j] > t; j--)
				a[j + 1] = a[j]
			a[j + 1] = t
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		n++; u[n] = $1 / 1e6; t[n] = $2 / 1e6; r[n] = $2 / $1
		d[n] = ($2 - $1) / 1000
		p[n] = hits > 0 ? ($2 - $1) * 1000 / hits : 0
		if (n == 1 || $1 < umin) umin = $1
		if (n == 1 || $1 > umax) umax = $1
		if (n == 1 || $2 < tmin) tmin = $2
		if (n == 1 || r[n] < rmin) rmin = r[n]
		if (n == 1 || r[n] > rmax) rmax = r[n]
	}
	END {
		if (n == 0) exit 1
		printf "%.3f %.3f %.2f %.2f %.2f %.1f %.2f %.2f %.1f\n", median(u, n), median(t, n),
			median(r, n), rmin, rmax, median(d, n), umax / umin, tmin / umin, median(p, n)
	}' "$1"
}

# column N of FILE, median (awk expression of $fields allowed)
median_of() {
	awk "{ n++; a[n] = $2 }"'
	END {
		if (n == 0) exit 1
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}' "$1"
}

echo "# memtap benchmark: allocator probes (malloc/free loop)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(uname -r) $(uname -m), $(nproc) CPUs"
echo "- load average: $load0 at start, $load1 at end; suite took ${elapsed} s"
echo "- repetitions: $reps pairs (untraced, traced) per cell, order flipped every repetition; scale $scale"
if [ -n "$pin" ]; then
	echo "- pinned: every command runs on CPU $pin (taskset), tracer and tracee alike"
else
	echo "- not pinned: the scheduler places tracer and tracee"
fi
for t in $active; do
	case $t in
	memtap-none | ltrace | heaptrack | massif) echo "- $(tool_label "$t" | cut -d ' ' -f 1): $(tool_version "$t")" ;;
	esac
done
for t in $skipped; do
	echo "- $(tool_label "$t"): not installed or not built, skipped"
done
echo "- loop: alloc-loop -t THREADS -n N/THREADS: N × (malloc, calloc, realloc, free, free)"
echo
echo "slowdown = median over the pairs of traced/untraced wall time (range: min–max);"
echo "added ms = median of traced − untraced; hits = the loop's calls of the functions the"
echo "tool intercepts (5 per iteration for -e alloc, heaptrack and massif; 3 for malloc+free);"
echo "ns/hit = median of (traced − untraced) / hits; net ns/hit subtracts the tool's start-up"
echo "cell (1 thread, 0 iterations); stops = memtap's ptrace stops (malloc, calloc, realloc:"
echo "2 each, free: 1, plus glibc's own calls); µs/stop = median of (traced − untraced) / stops."
echo "best = fastest traced / fastest untraced run; spread = slowest / fastest untraced run."

declare -A ratio perhit
startup_added() {
	[ -s "$workdir/samples/$1.0" ] || {
		echo 0
		return
	}
	stats "$workdir/samples/$1.0" 0 | awk '{ print $6 }'
}

echo
echo "## Slowdown and cost per hit"
echo
echo "| tool | threads | N | hits | untraced s | traced s | slowdown | range | best | spread | added ms | ns/hit | net ns/hit | stops/iter | µs/stop | failed runs |"
echo "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for t in $active; do
	case $t in
	floor*) ths=1 ;;
	*) ths="0 $threads_list" ;;
	esac
	su0=$(startup_added "$t")
	for th in $ths; do
		cell=$t.$th
		n=$(size_for "$t" "$th")
		tot=$((n * (th > 0 ? th : 1)))
		hits=$((tot * $(hits_per_iter "$t")))
		thl=$th
		[ "$th" -gt 0 ] || thl="1 (start-up)"
		case $t in floor*) thl=1 ;; esac
		nf=${failed[$cell]:-0}
		fl=
		[ "$nf" -eq 0 ] || fl="$nf of $reps (${lastfail[$cell]})"
		if [ ! -s "$workdir/samples/$cell" ]; then
			[ "$nf" -eq 0 ] || echo "| $(tool_label "$t") | $thl | $tot | $hits | | | failed | | | | | | | | | $fl |"
			ratio[$cell]=failed
			continue
		fi
		read -r mu mt mr rmin rmax added spread best mp < <(stats "$workdir/samples/$cell" "$hits")
		net=
		spi=
		sps=
		if [ "$hits" -gt 0 ]; then
			net=$(awk -v a="$added" -v s="$su0" -v h="$hits" 'BEGIN { printf "%.1f", (a - s) * 1000000 / h }')
		else
			mp=
		fi
		case $t:$th in
		*:0) ;;
		memtap-*:* | floor*:*)
			st=$(median_of "$workdir/samples/$cell" '$7')
			[ "$tot" -gt 0 ] && spi=$(awk -v s="$st" -v n="$tot" 'BEGIN { printf "%.2f", s / n }')
			sps=$(median_of "$workdir/samples/$cell" '($7 > 0 ? ($2 - $1) / $7 : 0)' |
				awk '{ printf "%.1f", $1 }')
			;;
		esac
		[ "$th" -eq 0 ] || {
			ratio[$cell]="$mr"
			perhit[$cell]="$net"
		}
		echo "| $(tool_label "$t") | $thl | $tot | $hits | $mu | $mt | **$mr** | $rmin–$rmax | $best | $spread | $added | $mp | $net | $spi | $sps | $fl |"
	done
done

echo
echo "## Summary: slowdown (net ns per hit)"
echo
printf '| tool |'
for th in $threads_list; do printf ' %s thread(s) |' "$th"; done
echo
printf '|---|'
for th in $threads_list; do printf -- '---:|'; done
echo
for t in $active; do
	case $t in floor*) continue ;; esac
	printf '| %s |' "$(tool_label "$t")"
	for th in $threads_list; do
		if [ "${ratio[$t.$th]:-}" = failed ]; then
			printf ' failed |'
		else
			printf ' %s (%s)%s |' "${ratio[$t.$th]:-}" "${perhit[$t.$th]:-}" \
				"${failed[$t.$th]:+, failed in ${failed[$t.$th]} of $reps runs}"
		fi
	done
	echo
done
# memtap's in-target modes against heaptrack: their slowdowns less 1
# (the time each adds to the loop), divided
for t in $active; do
	case $t in memtap-exact | memtap-dwarf) ;; *) continue ;; esac
	for th in $threads_list; do
		a=${ratio[$t.$th]:-} b=${ratio[heaptrack.$th]:-}
		case "$a:$b" in *failed* | :* | *:) continue ;; esac
		awk -v a="$a" -v b="$b" -v l="$(tool_label "$t")" -v th="$th" 'BEGIN {
			if (b > 1) printf "- %s, %s thread(s): adds %.2f of what heaptrack adds (slowdown - 1)\n", l, th, (a - 1) / (b - 1) }'
	done
done
for t in floor floor-harness; do
	[ -n "${perhit[$t.1]:-}" ] || continue
	echo "| $(tool_label "$t") | ${perhit[$t.1]} ns per call | |"
done

case " $active " in *" memtap-min1m "*)
	echo
	echo "## In-target probes: ns per call only counted, per kept record"
	echo
	echo "counted = (median added ms − start-up added ms) / hits of -e malloc --min-size 1M"
	echo "(every call only counted); per record = (median added ms − start-up added ms −"
	echo "calls × counted) / median records, calls = 5 per iteration, records = what the"
	echo "stubs recorded (-v). Needs runs long against the start-up's noise (--scale)."
	echo
	echo "| tool | threads | records/iter | ns per call counted | ns per record |"
	echo "|---|---:|---:|---:|---:|"
	for th in $threads_list; do
		f=$workdir/samples/memtap-min1m.$th
		[ -s "$f" ] || continue
		tot=$(($(size_for memtap-min1m "$th") * th))
		nc=$(awk -v a="$(median_of "$f" '($2 - $1) / 1000')" -v s="$(startup_added memtap-min1m)" \
			-v n="$tot" 'BEGIN { print (a - s) * 1e6 / n }')
		printf '| %s | %s | | %.1f | |\n' "$(tool_label memtap-min1m)" "$th" "$nc"
		for t in memtap-dwarf memtap-ovh5 memtap-exact; do
			f=$workdir/samples/$t.$th
			[ -s "$f" ] || continue
			tot=$(($(size_for "$t" "$th") * th))
			rec=$(median_of "$f" '$11')
			nr=$(awk -v a="$(median_of "$f" '($2 - $1) / 1000')" -v s="$(startup_added "$t")" \
				-v n="$tot" -v c="$nc" -v k="$rec" \
				'BEGIN { print (k > 0 ? ((a - s) * 1e6 - 5 * n * c) / k : 0) }')
			printf '| %s | %s | %.4f | | %.0f |\n' "$(tool_label "$t")" "$th" \
				"$(awk -v k="$rec" -v n="$tot" 'BEGIN { print k / n }')" "$nr"
		done
	done
	;;
esac

case " $active " in *" memtap-"*)
	echo
	echo "## memtap: tracer CPU time against wall time"
	echo
	echo "memtap's own CPU (user + system, all its threads) and the target's, from"
	echo "/proc/PID/stat (memtap reaps its target, so the target's is memtap's children's);"
	echo "medians. tracer busy = tracer CPU / wall: near 100 % the single tracer loop is the"
	echo "bottleneck; tracer runnable = time memtap was ready to run but waited for a CPU"
	echo "(/proc/PID/schedstat: other work on the machine); the rest of the wall time memtap"
	echo "slept in waitpid for the next stop. Target CPU untraced is the loop's at the same"
	echo "size (10 ms resolution)."
	echo
	echo "| tool | threads | wall s | tracer CPU s | tracer busy | tracer runnable s | tracer sleeping s | target CPU s | target CPU untraced s | stops/s | tracer CPU µs/stop |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for t in $active; do
		case $t in memtap-*) ;; *) continue ;; esac
		for th in $threads_list; do
			f=$workdir/samples/$t.$th
			if [ ! -s "$f" ]; then
				continue
			fi
			w=$(median_of "$f" '$2 / 1e6')
			tc=$(median_of "$f" '$3 + $4')
			busy=$(median_of "$f" '($3 + $4) / ($2 / 1e6) * 100')
			cc_=$(median_of "$f" '$5 + $6')
			sps=$(median_of "$f" '$7 / ($2 / 1e6)')
			rqw=$(median_of "$f" '$10')
			slp=$(median_of "$f" '$2 / 1e6 - $3 - $4 - $10')
			cps=$(median_of "$f" '($7 > 0 ? ($3 + $4) * 1e6 / $7 : 0)')
			# untraced CPU is not sampled by pair() (wall only): rerun once
			uc=$("$cputime" "$workdir/out/ucpu" "$loop" -t "$th" -n "$(size_for "$t" "$th")" >/dev/null 2>&1 &&
				tail -n 1 "$workdir/out/ucpu" | awk '{ print $2 + $3 }')
			printf '| %s | %s | %.3f | %.2f | %.0f %% | %.3f | %.3f | %.2f | %.2f | %.0f | %.1f |\n' \
				"$(tool_label "$t")" "$th" "$w" "$tc" "$busy" "$rqw" "$slp" "$cc_" "$uc" "$sps" "$cps"
		done
	done

	echo
	echo "## Correctness: malloc calls"
	echo
	echo "Every timed memtap run: memtap's malloc count (summary table) against the loop's"
	echo "own count plus glibc's own mallocs outside the loop (the stdout buffer), as found"
	echo "in a separate run with stacks (--weight=count, folded): **exact** is the number of"
	echo "runs where they agree. The check run must give the loop's calls and bytes to the"
	echo "stack through worker()."
	echo
	echo "| tool | threads | loop's mallocs | memtap's mallocs (median) | exact | check run: calls via worker / loop | bytes via worker / loop | other mallocs |"
	echo "|---|---:|---:|---:|---:|---|---|---:|"
	for t in $active; do
		case $t in memtap-*) ;; *) continue ;; esac
		for th in $threads_list; do
			f=$workdir/samples/$t.$th
			if [ ! -s "$f" ]; then
				continue
			fi
			other=${check[$th:other]:-}
			exp=$(median_of "$f" '$9')
			got=$(median_of "$f" '$8')
			ok=$(awk -v o="${other:-x}" '{ n++; if (o != "x" && $8 == $9 + o) k++ } END { printf "%d/%d", k, n }' "$f")
			cr="${check[$th:loop]:-?}/${check[$th:expect]:-?}"
			br="${check[$th:bytes]:-?}/${check[$th:ebytes]:-?}"
			echo "| $(tool_label "$t") | $th | $exp | $got | $ok | $cr | $br | ${other:-?} |"
		done
	done
	;;
esac

case " $active " in *" ltrace "* | *" heaptrack "*)
	echo
	echo "## The other tools' counts"
	echo
	echo "| tool | threads | counted | loop's |"
	echo "|---|---:|---|---|"
	for th in $threads_list; do
		[ -z "${check[lt$th]:-}" ] ||
			echo "| ltrace -e malloc+free (one run to a file) | $th | ${check[lt$th]%/*} malloc lines | ${check[lt$th]#*/} |"
	done
	for th in $threads_list; do
		n=$(size_for heaptrack "$th")
		[ -z "${check[ht$th]:-}" ] ||
			echo "| heaptrack (last timed run) | $th | ${check[ht$th]} allocation calls | $((3 * n * th + 2)) malloc+calloc+realloc |"
	done
	;;
esac

if [ -n "$wl_active$wl_skipped" ]; then
	echo
	echo "## Workloads: python3 and sqlite3"
	echo
	for w in $wl_skipped; do
		echo "- $w: not installed, skipped"
	done
	for w in $wl_active; do
		case $w in
		python3) echo "- python3: $("$python3" --version 2>&1), \`python3 -c PROGRAM $(wl_size python3)\` (a dict of N strings, N/10 bytes objects, a sort)" ;;
		sqlite3) echo "- sqlite3: $(sqlite3 --version 2>&1 | cut -d ' ' -f 1), \`sqlite3 :memory: SQL\` ($(wl_size sqlite3) rows of random blobs, an index, a GROUP BY)" ;;
		esac
	done
	if [ -n "$wl_active" ]; then
		echo
		echo "slowdown = median over the pairs of traced/untraced wall time (range: min–max);"
		echo "mallocs = memtap's malloc calls (the stubs' count with -v, else the summary's,"
		echo "an estimate when sampled), records = what the stubs recorded (-v); medians."
		echo
		echo "| workload | tool | untraced s | traced s | slowdown | range | added ms | mallocs | records | failed runs |"
		echo "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"
		for w in $wl_active; do
			for t in $wl_run; do
				cell=wl.$w.$t
				nf=${failed[$cell]:-0}
				fl=
				[ "$nf" -eq 0 ] || fl="$nf of $reps (${lastfail[$cell]})"
				if [ ! -s "$workdir/samples/$cell" ]; then
					echo "| $w | $(tool_label "$t") | | | failed | | | | | $fl |"
					continue
				fi
				read -r mu mt mr rmin rmax added _ < <(stats "$workdir/samples/$cell" 0)
				mm=
				rec=
				case $t in
				memtap-*)
					mm=$(awk '$3 != "-"' "$workdir/samples/$cell" | median_of /dev/stdin '$3') || mm=
					rec=$(median_of "$workdir/samples/$cell" '$4') || rec=
					;;
				esac
				echo "| $w | $(tool_label "$t") | $mu | $mt | **$mr** | $rmin–$rmax | $added | $mm | $rec | $fl |"
			done
		done
	fi
fi
