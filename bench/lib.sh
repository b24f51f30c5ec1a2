# bench/lib.sh - shell functions shared by the suites (syscalls.sh,
# stacks.sh), which source it (bash) after setting prog, here and their
# options' variables: memtap, workdir, keep, pin.
# shellcheck shell=bash disable=SC2034,SC2154 # set here for, or by, the suites

die() {
	echo "$prog: $*" >&2
	exit 64
}

log() {
	echo "$prog: $*" >&2
}

# find_memtap: unless memtap is set, ../memtap next to bench/, else memtap
# in PATH; dies when there is none or it is not executable
find_memtap() {
	if [ -z "$memtap" ]; then
		if [ -x "$here/../memtap" ]; then
			memtap=$here/../memtap
		elif command -v memtap >/dev/null 2>&1; then
			memtap=$(command -v memtap)
		else
			die "no memtap binary: build it first or pass --memtap=PATH"
		fi
	fi
	[ -x "$memtap" ] || die "not executable: $memtap"
}

# make_workdir NAME: workdir as an absolute path, with bin/, samples/ and
# out/; unless given, a temporary NAME.XXXXXX removed at exit (not with
# --keep)
make_workdir() {
	if [ -z "$workdir" ]; then
		workdir=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
		[ "$keep" = yes ] || trap 'rm -rf "$workdir"' EXIT
	else
		mkdir -p "$workdir"
	fi
	workdir=$(cd "$workdir" && pwd)
	mkdir -p "$workdir/bin" "$workdir/samples" "$workdir/out"
}

# µs since the epoch, from bash's EPOCHREALTIME (no fork)
now_us() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((10#$t))
}

# timed_pair REP OUT: one measurement, the array cmd untraced (output in
# OUT.untraced) and under the tool, cmd after the array pre (output in
# OUT.log), in an order that flips with REP, on CPU $pin if set; sets us
# and ut to what each suite's timed prints; fails with the exit status
# of a run that failed
timed_pair() {
	local rep=$1 out=$2 rc=0 pinned=()
	[ -z "$pin" ] || pinned=(taskset -c "$pin")
	if [ $((rep % 2)) -eq 1 ]; then
		us=$(timed "$out.untraced" "${pinned[@]}" "${cmd[@]}") || rc=$?
		ut=$(timed "$out.log" "${pinned[@]}" "${pre[@]}" "${cmd[@]}") || rc=$?
	else
		ut=$(timed "$out.log" "${pinned[@]}" "${pre[@]}" "${cmd[@]}") || rc=$?
		us=$(timed "$out.untraced" "${pinned[@]}" "${cmd[@]}") || rc=$?
	fi
	return $rc
}

# the report's line on --pin
report_pin() {
	if [ -n "$pin" ]; then
		echo "- pinned: every command runs on CPU $pin (taskset), tracer and tracee alike"
	else
		echo "- not pinned: the scheduler places tracer and tracee"
	fi
}

# median(a, n) for awk programs, which start with it: the median of
# a[1..n], sorted in place
awk_median='
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) {
			t = a[i]
			for (j = i - 1; j >= 1 && a[j] > t; j--)
				a[j + 1] = a[j]
			a[j + 1] = t
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}'
