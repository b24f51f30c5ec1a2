#!/bin/bash
# bench/syscalls.sh - what tracing memory syscalls costs a command, under
# memtap and under other tools, measured in the same run.
#
# Each measurement is a pair: the workload untraced and the workload
# under one tool, run back to back (the order flips on every repetition),
# and the pairs of all tools and workloads are interleaved.  A cell of
# the table is the median over the repetitions of traced/untraced, and
# of (traced - untraced) / events, where events are the memory syscalls
# (brk, mmap, munmap, mremap) that the workload makes at that size.
#
# Attach-mode tools (memtap-p*, strace-p-k) attach to the workload
# (mmap and brk only) once it runs: it waits (BENCH_GATE, see
# workloads/gate.h) until the tool has attached, and the time compared
# is the workload's own, from the start signal to the end of its work,
# untraced and traced alike.
#
# Output: Markdown on stdout.  Progress goes to stderr.

set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

reps=7
scale=1
memtap=${MEMTAP:-}
workloads="true dd iowrite mmap brk"
pin=
tools="memtap memtap-ptrace strace strace-ptrace strace-k ltrace heaptrack massif"
# attach mode, for the mmap and brk workloads
tools="$tools memtap-p memtap-p-int3 memtap-p-ptrace strace-p-k"
workdir=
keep=no
cc=${CC:-cc}

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]
Slowdown of memory-syscall tracing: memtap against strace, ltrace,
heaptrack and valgrind massif, on I/O-, mmap- and brk-heavy workloads.

  -r, --reps=N         repetitions (pairs untraced/traced) per cell [$reps]
  -s, --scale=F        multiply every workload size by F (e.g. 0.2, 3) [$scale]
  -m, --memtap=PATH    memtap binary [\$MEMTAP, else ../memtap next to
                       bench/, else memtap in PATH]
  -w, --workloads=LIST some of: $workloads
  -t, --tools=LIST     some of: $tools
                       (tools that are not installed are skipped)
      --workdir=DIR    build the workloads and keep outputs in DIR
                       (default: a temporary directory, removed at exit)
      --keep           do not remove the temporary directory
      --cc=CC          C compiler for the workloads [$cc]
      --pin=CPU        run everything (tools and workloads) on CPU CPU
                       (taskset): tracer and tracee share it [not pinned]
  -h, --help           show this help and exit

Workloads (size at scale 1; slow tools run a smaller size, see the
"size" column, paired with an untraced run of that same size):
  true      /bin/true: what a tool costs to start and finish
  dd        dd if=/dev/zero of=/dev/null bs=512 count=200000
  iowrite   200000 write(2) of 512 bytes to /dev/null
  mmap      5000 rounds of mmap 1-16 pages, touch each page, munmap
            (and an mremap every 16th round)
  brk       10 cycles of mallocs of 16-256 bytes up to 16 MiB, free all,
            malloc_trim: the heap grows and shrinks with brk

Attach-mode tools (memtap-p, memtap-p-int3, memtap-p-ptrace, strace-p-k)
attach to the mmap and brk workloads once they run, and compare the
workloads' own times (see workloads/gate.h).

Example: $prog -r 9 -w mmap,brk -t memtap,strace
EOF
}

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		arg=${opt#*=}
		opt=${opt%%=*}
		;;
	-[rsmwt])
		[ $# -ge 2 ] || die "option $opt needs an argument"
		arg=$2
		shift
		;;
	-[rsmwt]?*)
		arg=${opt#-?}
		opt=${opt%"$arg"}
		;;
	--reps | --scale | --memtap | --workloads | --tools | --workdir | --cc | --pin)
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
	-w | --workloads) workloads=${arg//,/ } ;;
	-t | --tools) tools=${arg//,/ } ;;
	--workdir) workdir=$arg ;;
	--cc) cc=$arg ;;
	--pin) pin=$arg ;;
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

find_memtap
make_workdir memtap-bench

# --- workloads ---------------------------------------------------------

for w in iowrite mmapper brkgrow; do
	"$cc" -O2 -g -Wall -Wextra -o "$workdir/bin/$w" "$here/workloads/$w.c" ||
		die "cannot build $here/workloads/$w.c"
done

# base size of a workload at --scale 1
base_size() {
	case $1 in
	true) echo 1 ;;
	dd) echo 200000 ;;
	iowrite) echo 200000 ;;
	mmap) echo 5000 ;;
	brk) echo 10 ;;
	*) die "unknown workload: $1" ;;
	esac
}

# by how much a tool's size is divided: those that stop on every
# syscall (PTRACE_SYSCALL), per event (strace -k) or are otherwise slow
# run a smaller size, to keep the whole suite within a few minutes
divisor() {
	case $1:$2 in
	true:*) echo 1 ;;
	memtap-ptrace:dd | memtap-ptrace:iowrite) echo 20 ;;
	strace-ptrace:dd | strace-ptrace:iowrite) echo 20 ;;
	ltrace:dd | ltrace:iowrite) echo 20 ;;
	strace-k:mmap | strace-p-k:mmap) echo 50 ;;
	strace-k:brk | strace-p-k:brk) echo 10 ;;
	ltrace:mmap) echo 10 ;;
	massif:dd | massif:iowrite) echo 4 ;;
	massif:mmap | massif:brk | heaptrack:brk) echo 2 ;;
	*) echo 1 ;;
	esac
}

size_for() {
	awk -v b="$(base_size "$2")" -v s="$scale" -v d="$(divisor "$1" "$2")" \
		'BEGIN { n = int(b * s / d + 0.5); print (n < 1 ? 1 : n) }'
}

describe_workload() {
	case $1 in
	true) echo "/bin/true: the cost of starting and finishing" ;;
	dd) echo "dd if=/dev/zero of=/dev/null bs=512 count=N" ;;
	iowrite) echo "iowrite N: N write(2) of 512 bytes to /dev/null" ;;
	mmap) echo "mmapper N: N × (mmap 1-16 pages, touch each page, munmap; mremap every 16th)" ;;
	brk) echo "brkgrow N: N cycles × (malloc 16-256 B blocks up to 16 MiB, free all, malloc_trim)" ;;
	esac
}

# workload_cmd WORKLOAD SIZE: sets the array cmd
workload_cmd() {
	case $1 in
	true) cmd=(/bin/true) ;;
	dd) cmd=(dd if=/dev/zero of=/dev/null bs=512 "count=$2") ;;
	iowrite) cmd=("$workdir/bin/iowrite" "$2") ;;
	mmap) cmd=("$workdir/bin/mmapper" "$2") ;;
	brk) cmd=("$workdir/bin/brkgrow" "$2") ;;
	esac
}

# --- tools -------------------------------------------------------------

memsys=brk,mmap,munmap,mremap

tool_label() {
	case $1 in
	memtap) echo "memtap (seccomp)" ;;
	memtap-ptrace) echo "memtap --syscalls=ptrace" ;;
	strace) echo "strace --seccomp-bpf" ;;
	strace-ptrace) echo "strace (no --seccomp-bpf)" ;;
	strace-k) echo "strace --seccomp-bpf -k" ;;
	ltrace) echo "ltrace -e mmap+munmap+mremap+brk+sbrk" ;;
	heaptrack) echo "heaptrack" ;;
	massif) echo "valgrind --tool=massif" ;;
	memtap-p) echo "memtap -p (detoured wrappers)" ;;
	memtap-p-int3) echo "memtap -p --probes=int3" ;;
	memtap-p-ptrace) echo "memtap -p --syscalls=ptrace" ;;
	strace-p-k) echo "strace -f -k -p (PTRACE_SYSCALL)" ;;
	esac
}

# Is TOOL an attach-mode one (the workload gated, its own time)?
attaching() {
	case $1 in
	memtap-p* | strace-p-k) return 0 ;;
	*) return 1 ;;
	esac
}

# tool_prefix TOOL OUTFILE: sets the array pre (the command line before
# the workload's)
tool_prefix() {
	case $1 in
	memtap) pre=("$memtap" -q -o "$2" --) ;;
	memtap-ptrace) pre=("$memtap" -q --syscalls=ptrace -o "$2" --) ;;
	strace) pre=(strace -f --seccomp-bpf -e "trace=$memsys" -o /dev/null) ;;
	strace-ptrace) pre=(strace -f -e "trace=$memsys" -o /dev/null) ;;
	strace-k) pre=(strace -f -k --seccomp-bpf -e "trace=$memsys" -o /dev/null) ;;
	ltrace) pre=(ltrace -f -e mmap+munmap+mremap+brk+sbrk -o /dev/null) ;;
	heaptrack) pre=(heaptrack -o "$2") ;;
	massif) pre=(valgrind --tool=massif "--massif-out-file=$2") ;;
	memtap-p) pre=("$memtap" -o "$2") ;;
	memtap-p-int3) pre=("$memtap" --probes=int3 -o "$2") ;;
	memtap-p-ptrace) pre=("$memtap" --syscalls=ptrace -o "$2") ;;
	strace-p-k) pre=(strace -f -k -e "trace=$memsys" -o /dev/null) ;;
	esac
}

tool_binary() {
	case $1 in
	memtap*) echo "$memtap" ;;
	strace*) echo strace ;;
	massif) echo valgrind ;;
	*) echo "$1" ;;
	esac
}

tool_version() {
	case $1 in
	memtap*) "$memtap" --version 2>&1 | head -n 1 ;;
	strace*) strace -V 2>&1 | head -n 1 ;;
	ltrace) ltrace -V 2>&1 | head -n 1 ;;
	heaptrack) heaptrack --version 2>&1 | head -n 1 ;;
	massif) valgrind --version 2>&1 | head -n 1 ;;
	esac
}

skipped=
active=
for t in $tools; do
	tool_label "$t" >/dev/null
	[ -n "$(tool_label "$t")" ] || die "unknown tool: $t"
	if command -v "$(tool_binary "$t")" >/dev/null 2>&1; then
		active="$active $t"
	else
		skipped="$skipped $t"
	fi
done
for w in $workloads; do
	base_size "$w" >/dev/null
done

# --- measuring ---------------------------------------------------------

# timed LOG CMD...: runs CMD with its output in LOG, prints elapsed µs;
# fails when the command does
timed() {
	local out=$1 t0 t1 rc=0
	shift
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >"$out" 2>&1 </dev/null || rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	echo $((10#$t1 - 10#$t0))
	return $rc
}

# memtap's summary line and event count: parse_memtap FILE sets
# m_stops m_seccomp m_syscall m_signal m_other m_events
parse_memtap() {
	local line
	line=$(grep -m 1 '^memtap: .* stops (' "$1" || true)
	m_stops=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) stops (.*/\1/p')
	m_seccomp=$(echo "$line" | sed -n 's/.*(seccomp \([0-9]*\),.*/\1/p')
	m_syscall=$(echo "$line" | sed -n 's/.*, syscall \([0-9]*\),.*/\1/p')
	m_signal=$(echo "$line" | sed -n 's/.*, signal \([0-9]*\),.*/\1/p')
	m_other=$(echo "$line" | sed -n 's/.*, other \([0-9]*\)).*/\1/p')
	# sum of the "total" rows of every process
	m_events=$(awk '$1 == "total" && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$1")
}

# count_events WORKLOAD SIZE: sets ev to the memory syscalls the
# workload makes at SIZE, counted once by memtap (seccomp mode), cached
declare -A events_cache
count_events() {
	local key=$1:$2 f
	if [ -z "${events_cache[$key]:-}" ]; then
		f=$workdir/out/count.$1.$2
		workload_cmd "$1" "$2"
		"$memtap" -q -o "$f" -- "${cmd[@]}" >/dev/null 2>&1 </dev/null ||
			die "memtap failed on: ${cmd[*]} (see $f)"
		parse_memtap "$f"
		events_cache[$key]=$m_events
		log "$1 at size $2 makes $m_events memory syscalls"
	fi
	ev=${events_cache[$key]}
}

# strace's count of the same syscalls, as a check of memtap's
strace_count() {
	local f=$workdir/out/strace-c.$1.$2
	workload_cmd "$1" "$2"
	strace -f --seccomp-bpf -c -e "trace=$memsys" -o "$f" "${cmd[@]}" >/dev/null 2>&1 </dev/null || true
	awk '$NF == "total" { print $4 }' "$f"
}

# gated OUT [TOOL...]: the workload (array cmd) gated, TOOL (the array
# pre, without -p) attached to it first if given; prints the workload's
# own µs; fails when the workload or the tool does
gated() {
	local out=$1 wp tp='' rc=0 i=0
	shift
	BENCH_GATE=1 "${cmd[@]}" >"$out.gate" 2>&1 </dev/null &
	wp=$!
	until grep -q '^ready ' "$out.gate" 2>/dev/null; do
		sleep 0.01
		i=$((i + 1))
		[ $i -lt 3000 ] || { kill -KILL $wp; return 99; }
	done
	if [ $# -gt 0 ]; then
		"$@" -p $wp >"$out.log" 2>&1 </dev/null &
		tp=$!
		i=0
		until grep -q 'ttached' "$out.log" 2>/dev/null; do
			sleep 0.01
			i=$((i + 1))
			[ $i -lt 3000 ] || { kill -KILL $wp $tp; return 99; }
		done
	fi
	kill -USR1 $wp
	wait $wp || rc=$?
	[ -z "$tp" ] || wait $tp || rc=$?
	sed -n 's/^elapsed_us //p' "$out.gate"
	return $rc
}

# attach_pair REP OUT: as timed_pair, for an attach-mode tool
attach_pair() {
	local rep=$1 out=$2 rc=0
	if [ $((rep % 2)) -eq 1 ]; then
		us=$(gated "$out.untraced") || rc=$?
		ut=$(gated "$out" "${pre[@]}") || rc=$?
	else
		ut=$(gated "$out" "${pre[@]}") || rc=$?
		us=$(gated "$out.untraced") || rc=$?
	fi
	return $rc
}

declare -A failed
pair() { # pair REP WORKLOAD TOOL
	local rep=$1 w=$2 t=$3 size us ut out rc=0
	size=$(size_for "$t" "$w")
	out=$workdir/out/$w.$t.$rep
	workload_cmd "$w" "$size"
	tool_prefix "$t" "$out.data"
	if attaching "$t"; then
		attach_pair "$rep" "$out" || rc=$?
	else
		timed_pair "$rep" "$out" || rc=$?
	fi
	if [ $rc -ne 0 ]; then
		failed[$w:$t]="exit status $rc (see $out.log)"
		log "$w under $t failed: exit status $rc"
		return 0
	fi
	echo "$us $ut" >>"$workdir/samples/$w.$t"
	case $t in
	memtap*)
		parse_memtap "$out.data"
		echo "$us $ut $m_stops $m_seccomp $m_syscall $m_signal $m_other $m_events" \
			>>"$workdir/samples/$w.$t.stops"
		;;
	esac
	rm -f "$out.data"* "$out.untraced"
}

# applies WORKLOAD TOOL: attach-mode tools run the gated workloads only
applies() {
	! attaching "$2" || [ "$1" = mmap ] || [ "$1" = brk ]
}

# --- run ---------------------------------------------------------------

start=$(now_us)
load0=$(cut -d ' ' -f 1-3 /proc/loadavg)
for w in $workloads; do
	for t in $active; do
		applies "$w" "$t" || continue
		count_events "$w" "$(size_for "$t" "$w")"
	done
done
for rep in $(seq 1 "$reps"); do
	log "repetition $rep/$reps"
	for w in $workloads; do
		for t in $active; do
			[ -z "${failed[$w:$t]:-}" ] || continue
			applies "$w" "$t" || continue
			pair "$rep" "$w" "$t"
		done
	done
done
load1=$(cut -d ' ' -f 1-3 /proc/loadavg)
elapsed=$((($(now_us) - start) / 1000000))

# --- report ------------------------------------------------------------

# stats FILE EVENTS: median untraced s, median traced s, median ratio,
# min ratio, max ratio, median µs per event, relative spread of the
# untraced runs (max/min), median ms added, min traced / min untraced
stats() {
	awk -v ev="$2" "$awk_median"'
	{
		n++; u[n] = $1 / 1e6; t[n] = $2 / 1e6; r[n] = $2 / $1
		p[n] = ev > 0 ? ($2 - $1) / ev : 0
		d[n] = ($2 - $1) / 1000
		if (n == 1 || $1 < umin) umin = $1
		if (n == 1 || $1 > umax) umax = $1
		if (n == 1 || $2 < tmin) tmin = $2
	}
	END {
		if (n == 0) exit 1
		mu = median(u, n); mt = median(t, n); mr = median(r, n); mp = median(p, n)
		rmin = r[1]; rmax = r[1]
		for (i = 1; i <= n; i++) { if (r[i] < rmin) rmin = r[i]; if (r[i] > rmax) rmax = r[i] }
		printf "%.3f %.3f %.2f %.2f %.2f %.1f %.2f %.1f %.2f\n", mu, mt, mr, rmin, rmax, mp, umax / umin, median(d, n), tmin / umin
	}' "$1"
}

# stop_stats FILE: median stops, median µs added per stop
stop_stats() {
	awk "$awk_median"'
	{ n++; s[n] = $3; q[n] = $3 > 0 ? ($2 - $1) / $3 : 0; line = $0 }
	END {
		if (n == 0) exit 1
		split(line, l, " ")
		printf "%d %.1f %d %d %d %d %d\n", median(s, n), median(q, n), l[4], l[5], l[6], l[7], l[8]
	}' "$1"
}

fmt_size() {
	case $1 in
	dd) echo "count=$2" ;;
	*) echo "N=$2" ;;
	esac
}

echo "# memtap benchmark: memory-syscall tracing"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(uname -r) $(uname -m), $(nproc) CPUs"
echo "- load average: $load0 at start, $load1 at end; suite took ${elapsed} s"
echo "- repetitions: $reps pairs (untraced, traced) per cell, order flipped every repetition; scale $scale"
report_pin
for t in $active; do
	case $t in
	memtap-ptrace | strace-ptrace | strace-k) ;;
	*) echo "- $(tool_label "$t"): $(tool_version "$t")" ;;
	esac
done
for t in $skipped; do
	echo "- $(tool_label "$t"): not installed, skipped"
done
echo
echo "slowdown = median over the pairs of traced/untraced wall time (range: min–max);"
echo "µs/event = median of (traced − untraced) / memory syscalls (brk, mmap, munmap, mremap)"
echo "made by the workload at that size; µs/stop = (traced − untraced) / memtap's ptrace stops;"
echo "added ms = median of traced − untraced (the fixed cost of a tool shows in the \"true\" rows)."
echo "best = fastest traced run / fastest untraced run (least disturbed by other work);"
echo "spread = slowest / fastest untraced run of the cell: the noise of the machine."
echo "Attach-mode rows (-p): the workload's own time from its start signal to its end,"
echo "attaching and detaching left out (workloads/gate.h), untraced and traced alike."

declare -A ratio
for w in $workloads; do
	echo
	echo "## $w: $(describe_workload "$w")"
	echo
	echo "| tool | size | events | untraced s | traced s | slowdown | range | best | spread | added ms | µs/event | stops/event | µs/stop |"
	echo "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
	for t in $active; do
		applies "$w" "$t" || continue
		s=$(size_for "$t" "$w")
		count_events "$w" "$s"
		if [ -n "${failed[$w:$t]:-}" ]; then
			echo "| $(tool_label "$t") | $(fmt_size "$w" "$s") | $ev | | | failed: ${failed[$w:$t]} | | | | | | | |"
			ratio[$w:$t]=failed
			continue
		fi
		read -r mu mt mr rmin rmax mp spread added best < <(stats "$workdir/samples/$w.$t" "$ev")
		ratio[$w:$t]="$mr ($best)"
		spe=
		sps=
		if [ -f "$workdir/samples/$w.$t.stops" ]; then
			read -r st sps _ < <(stop_stats "$workdir/samples/$w.$t.stops")
			spe=$(awk -v s="$st" -v e="$ev" 'BEGIN { if (e > 0) printf "%.2f", s / e }')
			# a stop or two to attach and detach: not a cost per stop
			awk -v s="$st" -v e="$ev" 'BEGIN { exit !(s * 10 < e) }' && sps=
		fi
		echo "| $(tool_label "$t") | $(fmt_size "$w" "$s") | $ev | $mu | $mt | **$mr** | $rmin–$rmax | $best | $spread | $added | $mp | $spe | $sps |"
	done
done

echo
echo "## Slowdown: median traced/untraced (best)"
echo
printf '| tool |'
for w in $workloads; do printf ' %s |' "$w"; done
echo
printf '|---|'
for w in $workloads; do printf -- '---:|'; done
echo
for t in $active; do
	printf '| %s |' "$(tool_label "$t")"
	for w in $workloads; do printf ' %s |' "${ratio[$w:$t]:-}"; done
	echo
done

case " $active " in
*" memtap"*)
	echo
	echo "## memtap's ptrace stops per traced memory syscall"
	echo
	echo "Stops as memtap's summary line counts them, divided by the memory syscalls"
	echo "memtap counted (strace -c's count of the same syscalls in the last column,"
	echo "as a check)."
	echo
	echo "| workload | mode | size | memory syscalls | stops | seccomp | syscall | signal | other | stops/syscall | strace count |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for w in $workloads; do
		for t in memtap memtap-ptrace memtap-p memtap-p-int3 memtap-p-ptrace; do
			[ -f "$workdir/samples/$w.$t.stops" ] || continue
			s=$(size_for "$t" "$w")
			read -r st _ sec sys sig oth ev < <(stop_stats "$workdir/samples/$w.$t.stops")
			sc=
			if command -v strace >/dev/null 2>&1; then
				sc=$(strace_count "$w" "$s")
			fi
			spe=$(awk -v s="$st" -v e="$ev" 'BEGIN { if (e > 0) printf "%.2f", s / e }')
			# a stop or two to attach and detach: not a cost per stop
			awk -v s="$st" -v e="$ev" 'BEGIN { exit !(s * 10 < e) }' && sps=
			case $t in
			memtap) mode=seccomp ;;
			memtap-ptrace) mode=ptrace ;;
			memtap-p) mode="-p detoured" ;;
			memtap-p-int3) mode="-p int3" ;;
			memtap-p-ptrace) mode="-p ptrace" ;;
			esac
			echo "| $w | $mode | $(fmt_size "$w" "$s") | $ev | $st | $sec | $sys | $sig | $oth | **$spe** | $sc |"
		done
	done
	;;
esac
