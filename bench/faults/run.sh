#!/bin/bash
# bench/faults/run.sh - page faults by stack through perf events: what
# memtap -e faults (and the engine of src/linux/perf.c alone) costs, and
# what it loses, against `perf record -e page-faults -c 1 --call-graph
# dwarf`.
#
#   bench/faults/run.sh [--builddir=DIR] [--reps=N] [--mib=N] [--stack=BYTES]
#
# The workload is tests/targets/faults with an argument: it maps N MiB
# (default 1024) and touches it page by page from one function, one
# fault per 4 KiB page.  Each repetition runs, in an order that turns
# with the repetition: the workload untraced; under memtap -e faults
# (--stack-size STACK, text report); under tests/unit/perf-faults
# at period 1 with a 4 MiB ring and with a 64 MiB ring (samples drained,
# copied out, unwound with libdw); under perf record (8 KiB stack copies,
# as --call-graph dwarf by default; its default ring); under bpftrace
# (software:page-faults:1 with ustack, counted per stack in the kernel:
# frame-pointer stacks, one frame for this workload) where bpftrace is
# installed; and under memtap with the widest event set (-e all,faults,
# mprotect,madvise: syscalls, allocator calls and faults, with stacks).
# memtap and perf copy STACK bytes of stack per sample.  Printed (Markdown): the median of
# traced/untraced wall times, the samples and lost samples of each, and
# perf-faults' own cost per sample (ns of drain, ns of unwind + intern),
# and memtap's slowdown over perf record's (the goal: at most 1.2).
# Needs root or kernel.perf_event_paranoid <= 1 for perf record.
set -eu

builddir=$(cd "$(dirname "$0")/../.." && pwd)/build
reps=5
mib=1024
stack=8192
for a in "$@"; do
	case $a in
	--builddir=*) builddir=${a#*=} ;;
	--reps=*) reps=${a#*=} ;;
	--mib=*) mib=${a#*=} ;;
	--stack=*) stack=${a#*=} ;;
	*) echo "usage: $0 [--builddir=DIR] [--reps=N] [--mib=N] [--stack=BYTES]" >&2; exit 64 ;;
	esac
done
harness=$builddir/tests/unit/perf-faults
target=$builddir/tests/targets/faults
memtap=$builddir/memtap
[ -x "$harness" ] && [ -x "$target" ] && [ -x "$memtap" ] ||
	{ echo "$0: build first: make -C $builddir memtap tests/unit/perf-faults tests/targets/faults" >&2; exit 64; }
command -v perf >/dev/null || { echo "$0: no perf" >&2; exit 64; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/faults-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

now_us() { local t=${EPOCHREALTIME/[.,]/}; echo $((10#$t)); }

# timed NAME CMD...: run, append the wall µs to $tmp/NAME.us
timed() {
	local name=$1 t0 t1
	shift
	t0=$(now_us)
	"$@" > "$tmp/$name.out" 2> "$tmp/$name.err" || { echo "$name failed:"; cat "$tmp/$name.err"; exit 1; } >&2
	t1=$(now_us)
	echo $((t1 - t0)) >> "$tmp/$name.us"
}

run_one() {
	case $1 in
	untraced) timed untraced "$target" "$mib" ;;
	memtap) timed memtap "$memtap" -e faults --stack-size "$stack" --top 1 -o "$tmp/memtap.txt" \
			-- "$target" "$mib"
		grep '^  faults: ' "$tmp/memtap.txt" >> "$tmp/memtap.totals" ;;
	ring4) timed ring4 "$harness" -v -c 1 -s "$stack" -r 4096 -- "$target" "$mib"
		grep '^total' "$tmp/ring4.out" >> "$tmp/ring4.totals"
		grep 'ns each' "$tmp/ring4.err" >> "$tmp/ring4.costs" ;;
	ring64) timed ring64 "$harness" -v -c 1 -s "$stack" -r 65536 -- "$target" "$mib"
		grep '^total' "$tmp/ring64.out" >> "$tmp/ring64.totals"
		grep 'ns each' "$tmp/ring64.err" >> "$tmp/ring64.costs" ;;
	perf) timed perf perf record -q -o "$tmp/perf.data" -e page-faults -c 1 \
			--call-graph "dwarf,$stack" -- "$target" "$mib"
		perf report -i "$tmp/perf.data" --stats 2>/dev/null |
			awk '/SAMPLE events:/ { s = $3 } /LOST events:/ { l = $3 } /LOST_SAMPLES events:/ { ls = $3 }
			     END { print "samples " s + 0 " lost-records " l + 0 " lost-samples " ls + 0 }' >> "$tmp/perf.totals"
		perf report -i "$tmp/perf.data" --stats 2>/dev/null | grep -i 'lost' | head -3 >> "$tmp/perf.lostlines" || true
		;;
	bpftrace) timed bpftrace bpftrace -q \
			-e 'software:page-faults:1 /pid == cpid/ { @[ustack] = count(); }' \
			-c "$target $mib"
		# the counts of every stack, and lost events if it says so
		awk '/^\]: [0-9]+$/ { s += $2 } END { print "samples " s + 0 }' "$tmp/bpftrace.out" \
			>> "$tmp/bpftrace.totals"
		grep -i 'lost' "$tmp/bpftrace.err" | head -1 >> "$tmp/bpftrace.lostlines" || true ;;
	wide) timed wide "$memtap" -e all,faults,mprotect,madvise --stack-size "$stack" --top 1 \
			-o "$tmp/wide.txt" -- "$target" "$mib"
		grep '^  faults: ' "$tmp/wide.txt" >> "$tmp/wide.totals" ;;
	esac
}

kinds=(untraced memtap ring4 ring64 perf wide)
if command -v bpftrace >/dev/null; then
	kinds+=(bpftrace)
else
	echo "$0: no bpftrace (apt-get install bpftrace): its row is left out" >&2
fi
for ((r = 0; r < reps; r++)); do
	for ((i = 0; i < ${#kinds[@]}; i++)); do
		run_one "${kinds[(i + r) % ${#kinds[@]}]}"
	done
	echo "rep $((r + 1))/$reps" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { paste "$tmp/$1.us" "$tmp/untraced.us" | awk '{ printf "%.2f\n", $1 / $2 }' | median; }

echo "Workload: $mib MiB touched page by page ($((mib * 256)) faults), stack copy $stack bytes, $reps repetitions, $(nproc) CPUs"
echo "Untraced median: $(median < "$tmp/untraced.us") µs"
echo
echo "| run | slowdown (median) | per-rep totals |"
echo "|---|---|---|"
for k in ring4 ring64; do
	echo "| perf-faults, ring $([ $k = ring4 ] && echo 4 || echo 64) MiB | $(ratio $k) | $(awk '{ printf "%s%s/%s lost", sep, $5, $7; sep = "; " }' "$tmp/$k.totals") samples |"
done
echo "| perf record -c 1 --call-graph dwarf | $(ratio perf) | $(awk '{ printf "%s%s samples, %s lost", sep, $2, $6; sep = "; " }' "$tmp/perf.totals") |"
echo "| memtap -e faults | $(ratio memtap) | $(awk '{ printf "%s%s counted, %s sampled, %s lost", sep, $2, $4, $9; sep = "; " }' "$tmp/memtap.totals") |"
echo "| memtap -e all,faults,mprotect,madvise | $(ratio wide) | $(awk '{ printf "%s%s counted, %s sampled, %s lost", sep, $2, $4, $9; sep = "; " }' "$tmp/wide.totals") |"
if [ -s "$tmp/bpftrace.us" ]; then
	echo "| bpftrace software:page-faults:1 + ustack | $(ratio bpftrace) | $(awk '{ printf "%s%s counted", sep, $2; sep = "; " }' "$tmp/bpftrace.totals")$([ -s "$tmp/bpftrace.lostlines" ] && echo "; $(head -1 "$tmp/bpftrace.lostlines")") |"
fi
echo
paste "$tmp/memtap.us" "$tmp/perf.us" | awk '{ printf "%.2f\n", $1 / $2 }' | median |
	awk '{ print "memtap / perf record, median of the paired ratios: " $1 " (goal: at most 1.2)" }'
if [ -s "$tmp/bpftrace.us" ]; then
	paste "$tmp/memtap.us" "$tmp/bpftrace.us" | awk '{ printf "%.2f\n", $1 / $2 }' | median |
		awk '{ print "memtap / bpftrace, median of the paired ratios: " $1 }'
fi
echo
echo "Wall ms of each rep (untraced, memtap, wide, perf record, bpftrace):"
paste "$tmp/untraced.us" "$tmp/memtap.us" "$tmp/wide.us" "$tmp/perf.us" \
	"$([ -s "$tmp/bpftrace.us" ] && echo "$tmp/bpftrace.us" || echo /dev/null)" |
	awk '{ printf " "; for (i = 1; i <= NF; i++) printf " %d", $i / 1000; print "" }'
echo
for k in ring4 ring64; do
	echo "perf-faults $k, memtap-side ns per sample (drain; unwind + intern), each rep:"
	sed 's/.*ns each: \([0-9]*\) drain, \([0-9]*\) unwind.*/  \1; \2/' "$tmp/$k.costs"
done
