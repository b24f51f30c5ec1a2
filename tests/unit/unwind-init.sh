# unwind-init.sh - sourced by the stack and unwinding tests
# (tests/unit/stack-*.test, tests/unit/unwind-*.test).
#
# Exit codes as the automake harness reads them: 0 pass, 1 fail,
# 77 skip, 99 hard error.  Every program runs under timeout(1).

: "${top_builddir:=.}" "${top_srcdir:=.}"
unit=$top_builddir/tests/unit
targets=$top_builddir/tests/targets
TIMEOUT=${TIMEOUT:-60}
me=${0##*/}

fail() { echo "$me: FAIL: $*" >&2; exit 1; }
skip() { echo "$me: SKIP: $*" >&2; exit 77; }
framework_failure() { echo "$me: ERROR: $*" >&2; exit 99; }

# run PROGRAM ARGS: the program under timeout; its status in $?
run() { timeout "$TIMEOUT" "$@"; }

# check_status STATUS WHAT: act on a program's exit status
check_status()
{
	case $1 in
	0) ;;
	77) skip "$2: not available here" ;;
	124) fail "$2: timed out after ${TIMEOUT}s" ;;
	*) fail "$2: exit status $1" ;;
	esac
}

# Frame 0 of every stack stopped in mmap: libc's wrapper, named mmap,
# mmap64 or __mmap (plus, with libc6-dbg, the frames inlined into it).
LIBC_MMAP='([^ ]*mmap[^ ]* )+'

# expect_stack OUTPUT N REGEX: line "stack N: ..." of OUTPUT matches
# "^stack N: REGEX"
expect_stack()
{
	es_line=$(printf '%s\n' "$1" | grep "^stack $2:")
	[ -n "$es_line" ] || fail "$3: no stack $2 in output: $1"
	printf '%s\n' "$es_line" | grep -Eq "^stack $2: $4" ||
		fail "$3: got '$es_line', want /^stack $2: $4/"
}

tmpdir=
make_tmpdir()
{
	tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/memtap-$me.XXXXXX") ||
		framework_failure "mktemp failed"
	trap 'rm -rf "$tmpdir"' EXIT
}
