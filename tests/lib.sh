# tests/lib.sh - sourced by every tests/*.test script.
#
# Exit codes as automake's harness reads them: 0 pass, 1 fail, 77 skip,
# 99 hard error.  Every test runs under a timeout and traces only the
# processes it starts itself.

set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# MEMTAP_UNDER_TEST: another memtap binary (tests/compat-suite.test)
MEMTAP="${MEMTAP_UNDER_TEST:-$top_builddir/memtap}"
TARGETS="$top_builddir/tests/targets"
ME=$(basename "$0" .test)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memtap-$ME.XXXXXX") || exit 99
# the uncompressed copies of compressed debug files: the suite's own
: "${MEMTAP_DEBUG_CACHE:=$top_builddir/tests/debug-cache}"
export MEMTAP_DEBUG_CACHE
BGPIDS=""

cleanup() {
	for p in $BGPIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $ME: $*" >&2; exit 1; }
skip() { echo "SKIP: $ME: $*"; exit 77; }
framework_error() { echo "ERROR: $ME: $*" >&2; exit 99; }

[ -x "$MEMTAP" ] || framework_error "no memtap binary at $MEMTAP"

# Run memtap with a time limit; stdout/stderr as the caller redirects.
memtap() { timeout -k 5 60 "$MEMTAP" "$@"; }

# wait_for FILE REGEX [SECONDS]: poll until a line of FILE matches (30 s
# by default: generous, a loaded machine can be slow to start a target).
wait_for() {
	_wi=0
	while ! grep -qE "$2" "$1" 2>/dev/null; do
		_wi=$((_wi + 1))
		[ $_wi -gt $((${3:-30} * 20)) ] && fail "timed out waiting for /$2/ in $1: $(cat "$1" 2>/dev/null)"
		sleep 0.05
	done
}

# check_expect TARGET_OUT MEMTAP_OUT: the EXPECT lines the target printed,
# summed per (pid, event), must equal memtap's summary rows for those
# pids, for every syscall event (an event with no EXPECT line must be 0).
check_expect() {
	awk '
	FNR == 1 { file++ }
	file == 1 && $1 == "EXPECT" {
		key = $2 " " $3
		calls[key] += $4; acq[key] += $5; rel[key] += $6
		pids[$2] = 1
	}
	file == 2 && $1 == "process" { pid = $2 }
	file == 2 && pid != "" && ($1 == "brk" || $1 == "mmap" || $1 == "munmap" || $1 == "mremap") && NF == 5 {
		got[pid " " $1] = $2 " " $4 " " $5
		seen[pid] = 1
	}
	END {
		bad = 0
		n = split("brk mmap munmap mremap", ev, " ")
		for (p in pids) {
			if (!seen[p]) { print "no summary for process " p; bad = 1; continue }
			for (i = 1; i <= n; i++) {
				key = p " " ev[i]
				want = (calls[key] + 0) " " (acq[key] + 0) " " (rel[key] + 0)
				if (got[key] != want) {
					print "process " p " " ev[i] ": memtap says calls/acquired/released " got[key] ", target says " want
					bad = 1
				}
			}
		}
		exit bad
	}' "$1" "$2" >&2 || fail "counts differ (target output: $1, memtap output: $2)"
}

# The row of an event for a pid in a summary: "CALLS FAILED ACQ REL".
summary_row() {
	awk -v pid="$2" -v ev="$3" '$1 == "process" { p = $2 } p == pid && $1 == ev && NF == 5 { print $2, $3, $4, $5; exit }' "$1"
}

# start_waiter ARGS...: start tests/targets/waiter in the background,
# wait for its "ready" line; sets WPID and WOUT.
NWAITERS=0
start_waiter() {
	NWAITERS=$((NWAITERS + 1))
	WOUT="$WORK/waiter.$NWAITERS.out"
	"$TARGETS/waiter" "$@" > "$WOUT" &
	WPID=$!
	BGPIDS="$BGPIDS $WPID"
	wait_for "$WOUT" '^ready '
}

# attach_memtap OUT ERR ARGS...: start memtap -p in the background and
# wait until it says it attached; sets MPID.
attach_memtap() {
	_out=$1 _err=$2
	shift 2
	# no stale "attached" line from an earlier run may answer wait_for
	rm -f "$_err"
	# -k: a signal the test sends is forwarded, and starts the clock too.
	# --foreground: without it timeout sends SIGCONT after the signal,
	# which may come once memtap is exiting and discard the SIGSTOP of
	# LeakSanitizer's PTRACE_ATTACH to memtap's threads: a sanitized
	# memtap then hangs in its leak check (no SIGCONT, no hang).
	timeout --foreground -k 60 120 "$MEMTAP" "$@" > "$_out" 2> "$_err" &
	MPID=$!
	BGPIDS="$BGPIDS $MPID"
	wait_for "$_err" 'attached to process'
}

# died_after_kill WHAT: fail with what is known of a target that died
# after its memtap was killed: its output, what the killed memtap said
# last ($WORK/m.err; the kill tests run it with -v) and the kernel's
# line of the fatal trap or fault, if readable.
died_after_kill() {
	fail "$1: $(tail -2 "$WORK/t.out" 2>/dev/null | tr '\n' ' ')| memtap said:" \
		"$(grep -v 'kernel feature' "$WORK/m.err" 2>/dev/null | tail -6 | tr '\n' ' ')|" \
		"$(dmesg 2>/dev/null | grep -E 'traps:|segfault at' | tail -2 | tr '\n' ' ')"
}

# check_untraced PID: no tracer, and no thread left in a stop.
check_untraced() {
	tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status")
	[ "$tracer" = 0 ] || fail "process $1 still traced by $tracer"
	for st in /proc/"$1"/task/*/stat; do
		state=$(sed 's/.*) \(.\).*/\1/' "$st")
		case $state in
		t|T) fail "thread $(basename "$(dirname "$st")") left stopped ($state)" ;;
		esac
	done
}

# waiter_round PID N: ask for a round and wait until "round N done".
waiter_round() {
	kill -USR1 "$1"
	wait_for "$WOUT" "^round $2 done"
}

# run_once: a slow test (a language runtime's start-up: Node.js, the
# JVM, Go's compiler) runs in the normal build's pass only, skipped
# in the sanitized build's and in memtap-static's (scripts/setup.sh).
run_once() {
	[ -z "${MEMTAP_UNDER_TEST:-}" ] || skip "slow: runs in the normal build's pass only"
	! grep -q '^SANITIZER_CFLAGS = .*-fsanitize' "$top_builddir/Makefile" 2>/dev/null ||
		skip "slow: runs in the normal build's pass only"
}
