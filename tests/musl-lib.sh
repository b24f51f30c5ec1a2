# tests/musl-lib.sh - sourced by tests/musl-*.test after tests/lib.sh:
# build tests/targets/musl-stack.c with musl-gcc, or skip.

command -v musl-gcc > /dev/null 2>&1 || skip "no musl-gcc (Debian: musl-tools)"

# musl_build NAME [CFLAGS...]: $WORK/ms-NAME (-static among CFLAGS: static)
musl_build() {
	_name=$1
	shift
	musl-gcc "$@" -O2 -g -I"$top_srcdir/tests/targets" -o "$WORK/ms-$_name" \
		"$top_srcdir/tests/targets/musl-stack.c" > "$WORK/cc-$_name.err" 2>&1 ||
		skip "musl-gcc $* cannot build a program here: $(head -3 "$WORK/cc-$_name.err")"
}
