# tests/go-lib.sh - sourced after lib.sh by the tests of Go programs:
# skips without a Go compiler; go_build OUT [GO BUILD FLAGS...] builds
# tests/targets/go-grow.go into $WORK/OUT, with Go's build cache in the
# build directory (a second run builds from it).
GO=$(command -v go 2>/dev/null || true)
[ -n "$GO" ] || skip "no Go compiler (go, Debian's golang-go)"
GOCACHE="$top_builddir/tests/go-cache"
GOPATH="$top_builddir/tests/go-path"
GOFLAGS=
GO111MODULE=off
GOTOOLCHAIN=local
export GOCACHE GOPATH GOFLAGS GO111MODULE GOTOOLCHAIN

# The size of go-grow's blocks (and of spawn's one): --min-size and
# --max-size select them alone among the runtime's own mappings.
GO_BLOCK=5251072

go_build() {
	_out=$1
	shift
	(cd "$WORK" && "$GO" build -o "$WORK/$_out" "$@" "$top_srcdir/tests/targets/go-grow.go") \
		> "$WORK/go-build.err" 2>&1 || framework_error "go build $*: $(cat "$WORK/go-build.err")"
}
