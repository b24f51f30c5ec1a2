# tests/musl-lib.sh - sourced by tests/musl-*.test after tests/lib.sh:
# build tests/targets/musl-stack.c with musl-gcc, or skip.

command -v musl-gcc > /dev/null 2>&1 || skip "no musl-gcc (Debian: musl-tools)"

# musl_build KIND: $WORK/ms-KIND, KIND dynamic or static
musl_build() {
	_flags=
	[ "$1" = static ] && _flags=-static
	musl-gcc $_flags -O2 -g -I"$top_srcdir/tests/targets" -o "$WORK/ms-$1" \
		"$top_srcdir/tests/targets/musl-stack.c" > "$WORK/cc-$1.err" 2>&1 ||
		skip "musl-gcc $_flags cannot build a program here: $(head -3 "$WORK/cc-$1.err")"
}
