#!/bin/sh
# bench/bp-cost.sh - what an int3 probe costs the target, on this machine.
#
#   bench/bp-cost.sh [BUILDDIR] [REPEAT]
#
# Measures, with tests/unit/bp-harness and tests/targets/alloc-loop:
#   1. the int3 round trip: a call of an empty function, probed at entry
#      (one stop, first instruction run out of line), minus the same loop
#      untraced, per call;
#   2. a malloc/calloc/realloc/free loop, 1 and 8 threads, untraced and
#      traced with entries and returns (malloc, calloc, realloc: two stops
#      each; free: one), per stop;
#   3. the same, entries only;
# each floating and with tracer and target pinned to one CPU.  Medians of
# REPEAT runs (default 3).  Not a pass/fail test.
set -e
B=${1:-.}
R=${2:-3}
H="$B/tests/unit/bp-harness"
T="$B/tests/targets/alloc-loop"
[ -x "$H" ] && [ -x "$T" ] || { echo "build first: make check TESTS=" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

now() { date +%s.%N; }

# median of the numbers on stdin
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# run PIN CMD...: wall seconds
run() {
	pin=$1; shift
	t0=$(now)
	if [ "$pin" = pin ]; then taskset -c 0 "$@" > /dev/null; else "$@" > /dev/null; fi
	t1=$(now)
	awk "BEGIN { print $t1 - $t0 }"
}

# stops PIN HARNESS-ARGS -- TARGET-ARGS: "seconds stops"
traced() {
	pin=$1; shift
	t0=$(now)
	if [ "$pin" = pin ]; then
		taskset -c 0 "$H" -o "$TMP/h.out" "$@" > /dev/null
	else
		"$H" -o "$TMP/h.out" "$@" > /dev/null
	fi
	t1=$(now)
	s=$(sed -n 's/^STATS entries=\([0-9]*\) returns=\([0-9]*\).*/\1 \2/p' "$TMP/h.out" |
		awk '{ print $1 + $2 }')
	awk "BEGIN { print $t1 - $t0, $s }"
}

# case NAME PIN HARNESS-PROBES -- TARGET-ARGS
measure() {
	name=$1; pin=$2; probes=$3; shift 3
	: > "$TMP/plain"; : > "$TMP/traced"
	i=0
	while [ $i -lt "$R" ]; do
		run "$pin" "$T" "$@" >> "$TMP/plain"
		# shellcheck disable=SC2086
		traced "$pin" $probes -- "$T" "$@" >> "$TMP/traced"
		i=$((i + 1))
	done
	p=$(median < "$TMP/plain")
	t=$(awk '{ print $1 }' "$TMP/traced" | median)
	s=$(awk '{ print $2 }' "$TMP/traced" | median)
	awk -v n="$name" -v pin="$pin" -v p="$p" -v t="$t" -v s="$s" 'BEGIN {
		printf "%-34s %-5s untraced %7.3f s  traced %7.3f s  stops %8d  %6.1f us/stop  x%.1f\n",
			n, pin, p, t, s, (t - p) * 1e6 / s, t / p }'
}

echo "memtap breakpoint cost, $(nproc) CPUs, $(uname -r), median of $R"
for pin in float pin; do
	measure "int3 round trip (empty_fn)" $pin "-s empty_fn" -e -n 100000
	measure "malloc loop 1 thread, +returns" $pin "-a" -t 1 -n 20000
	measure "malloc loop 1 thread, entries" $pin "-s malloc -s calloc -s realloc -s free" -t 1 -n 20000
	measure "malloc loop 8 threads, +returns" $pin "-a" -t 8 -n 2500
done
