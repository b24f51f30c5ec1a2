# tests/go-lib.sh - sourced after lib.sh by the tests of Go programs:
# skips without a Go compiler; go_build OUT [GO BUILD FLAGS...] builds
# tests/targets/go-grow.go into $WORK/OUT, with Go's build cache in the
# build directory (a second run builds from it); go_build_src SOURCE OUT
# [FLAGS...] another program of tests/targets.
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

go_build_src() {
	_src=$1 _out=$2
	shift 2
	(cd "$WORK" && "$GO" build -o "$WORK/$_out" "$@" "$top_srcdir/tests/targets/$_src") \
		> "$WORK/go-build.err" 2>&1 || framework_error "go build $*: $(cat "$WORK/go-build.err")"
}

go_build() {
	go_build_src go-grow.go "$@"
}

# start_go OUT PROGRAM ARGS...: start it, wait for "ready"; sets GPID
start_go() {
	_o=$1
	shift
	"$@" > "$_o" &
	GPID=$!
	BGPIDS="$BGPIDS $GPID"
	wait_for "$_o" '^ready '
}
