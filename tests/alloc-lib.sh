# tests/alloc-lib.sh - sourced by the alloc-*.test scripts, after lib.sh.
#
# The targets (alloc-all, alloc-dl) print "RANGE <pid> <start> <end>",
# the addresses of their own code, and "EXPECT <pid> <event> <calls>
# <bytes> <failed>".  memtap --trace prints each allocator event with
# "from <caller>"; the events whose caller lies in the range of their
# process are the target's own calls, and must add up exactly to the
# EXPECT lines (an event kind with no EXPECT line must have none).

# Skip when this host forbids ptrace.
alloc_require_ptrace() {
	if ! timeout 20 "$MEMTAP" -q -e malloc -o /dev/null -- /bin/true 2> "$WORK/probe.err"; then
		grep -q "not permitted" "$WORK/probe.err" && skip "ptrace is not permitted here"
		fail "memtap cannot trace /bin/true: $(cat "$WORK/probe.err")"
	fi
}

# alloc_check TARGET_OUTPUT MEMTAP_TRACE: compare.
alloc_check() {
	awk '
	FNR == 1 { file++ }
	file == 1 && $1 == "RANGE" { lo[$2] = $3 ""; hi[$2] = $4 ""; n++ }
	file == 1 && $1 == "EXPECT" { k = $2 " " $3; wc[k] += $4; wb[k] += $5; wf[k] += $6 }
	file == 2 && NF > 8 && $(NF - 1) == "from" && ($2 in lo) {
		c = $NF ""
		if (c < lo[$2] || c >= hi[$2])
			next
		k = $2 " " $5
		calls[k]++
		if ($6 == "failed")
			failed[k]++
		else
			bytes[k] += substr($6, 2) + 0
		seen[k] = 1
	}
	END {
		bad = 0
		if (!n) { print "no RANGE line"; exit 1 }
		for (k in wc) {
			got = (calls[k] + 0) " " (bytes[k] + 0) " " (failed[k] + 0)
			want = wc[k] " " wb[k] " " wf[k]
			if (got != want) {
				print "process/event " k ": memtap saw calls/bytes/failed " got ", target says " want
				bad = 1
			}
			checked++
		}
		for (k in seen)
			if (!(k in wc)) {
				print "process/event " k ": " calls[k] " calls the target did not make"
				bad = 1
			}
		if (!bad)
			print checked " expectations met"
		exit bad
	}' "$1" "$2" >&2 || fail "counts differ (target output: $1, memtap trace: $2)"
}
