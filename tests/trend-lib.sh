# tests/trend-lib.sh - sourced by the tests of tests/targets/trend
# (trend-suspects, html-trend-browser) after lib.sh: the target ticked
# once an interval of memtap's -i run has ended, TICKS times.
# shellcheck shell=sh

# intervals FILE: the interval headers memtap wrote so far
intervals() { grep -c '^memtap: interval ' "$1" 2>/dev/null || true; }

# drive WHAT: tick the target ($TOUT, pid $TPID) between memtap's
# intervals ($WORK/m.out); the interval index of each tick to $WORK/at
drive() {
	: > "$WORK/at"
	k=0
	last=$(intervals "$WORK/m.out")
	while [ $k -lt $TICKS ]; do
		n=0
		while [ "$(intervals "$WORK/m.out")" -le "$last" ]; do
			n=$((n + 1))
			[ $n -gt 1200 ] && fail "$1: no interval after tick $k: $(cat "$WORK/m.err")"
			sleep 0.05
		done
		k=$((k + 1))
		at=$(intervals "$WORK/m.out")
		kill -USR1 "$TPID"
		wait_for "$TOUT" "^tick $k\$"
		echo "$at" >> "$WORK/at"
		last=$(intervals "$WORK/m.out")
	done
	kill -USR1 "$TPID"
}
