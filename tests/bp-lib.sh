# tests/bp-lib.sh - shared by the bp-*.test scripts (sourced).
#
# The harness (tests/unit/bp-harness) traces a target it launches; the
# target prints "EXPECT <function> <calls> <bytes>" and "EXPECT live N";
# bp_compare checks them against the harness's "EXE" and "LIVE" lines.

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
HARNESS="$top_builddir/tests/unit/bp-harness"
TARGETS="$top_builddir/tests/targets"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bp-test.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# Skip when this host forbids ptrace (containers without CAP_SYS_PTRACE).
bp_require_ptrace() {
	[ -x "$HARNESS" ] || fail "no $HARNESS"
	if ! timeout 20 "$HARNESS" -s main -o "$TMP/probe.out" -- /bin/true \
		2>"$TMP/probe.err"; then
		if grep -q "not permitted" "$TMP/probe.err"; then
			skip "ptrace is not permitted here"
		fi
		cat "$TMP/probe.err" >&2
		fail "the harness cannot trace /bin/true"
	fi
}

# bp_compare TARGET_OUTPUT HARNESS_OUTPUT
bp_compare() {
	_n=0
	while read -r tag fn calls bytes; do
		[ "$tag" = EXPECT ] || continue
		if [ "$fn" = live ]; then
			grep -qx "LIVE $calls" "$2" ||
				fail "live bytes: expected $calls, got '$(grep ^LIVE "$2")'"
		else
			grep -qx "EXE $fn $calls $bytes" "$2" ||
				fail "$fn: expected $calls calls $bytes bytes, got '$(grep "^EXE $fn " "$2")'"
		fi
		_n=$((_n + 1))
	done < "$1"
	[ "$_n" -gt 0 ] || fail "no EXPECT line in $1"
	echo "$_n expectations met"
}
