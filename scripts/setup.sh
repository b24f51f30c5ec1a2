#!/bin/sh
# scripts/setup.sh demo|check|check-arm64 - install the build dependencies
# (Debian, as root), build memtap, then either run it on the bundled demo
# workload or run the whole test suite twice: a normal build and an
# AddressSanitizer/UBSan build, plus memtap-static (scripts/build-static.sh)
# tested against the normal build and given the whole suite to run once
# more.  The last line of `check` is
# "N passed, N failed, N skipped".
# check-arm64 runs the arm64 tests instead, in the arm64 guest of
# scripts/arm64-guest.sh (built on the first run, a few minutes, and
# cached), with the same last line; their logs are in build-arm64/.
set -eu

what=${1:-check}
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
deps="autoconf automake libtool pkg-config make gcc g++ libc6-dev libelf-dev libdw-dev
libunwind-dev libzydis-dev zlib1g-dev libiberty-dev procps util-linux"
# For some tests only (they skip without them): command:package pairs,
# installed one by one, each only when the command is missing.
test_deps="strace:strace python3:python3 protoc:protobuf-compiler chromium:chromium
node:nodejs npm:npm go:golang-go musl-gcc:musl-tools java:openjdk-17-jdk-headless
tmux:tmux prometheus:prometheus"

install_deps() {
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null; then
		echo "setup: not root or no apt-get: assuming the dependencies are installed" >&2
		return 0
	fi
	missing=
	for p in $deps; do
		dpkg -s "$p" > /dev/null 2>&1 || missing="$missing $p"
	done
	updated=
	if [ -n "$missing" ]; then
		apt-get update -qq
		updated=1
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$missing > /dev/null
	fi
	[ "$what" = check ] || return 0
	for pair in $test_deps; do
		command -v "${pair%%:*}" > /dev/null && continue
		[ -n "$updated" ] || { apt-get update -qq; updated=1; }
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"${pair#*:}" > /dev/null 2>&1 ||
			echo "setup: could not install ${pair#*:}: the tests that need it will be skipped" >&2
	done
}

# build DIR [CONFIGURE ARGS...]: out-of-tree build in $top/DIR
build() {
	dir=$top/$1
	shift
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" --enable-werror "$@" > configure.log &&
		make -j"$jobs" > make.log 2>&1) || {
		echo "setup: build in $dir failed; see $dir/config.log and $dir/make.log" >&2
		tail -30 "$dir/make.log" >&2 2>/dev/null
		exit 1
	}
}

# check DIR [MEMTAP_STATIC [LOG]]: run the suite there; print its counts
# to fd 3, which the suite does not inherit (a process it leaves behind
# must not hold the counts' pipe open).  With LOG: the suite runs against MEMTAP_STATIC itself
# (tests/lib.sh's MEMTAP_UNDER_TEST), its summary in DIR/LOG.
check() {
	log=${3:-check.log}
	(cd "$top/$1" && env ${2:+MEMTAP_STATIC="$2"} ${3:+MEMTAP_UNDER_TEST="$2"} \
		make -j"$jobs" check > "$log" 2>&1 3>&-) || true
	grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS):' "$top/$1/$log" | sed "s|^|$1${3:+ (static)}: |"
	# the end of each failed test's log, kept for the end of the run
	# (the static pass overwrites the normal build's logs)
	for t in $(sed -n 's/^\(FAIL\|ERROR\|XPASS\): //p' "$top/$1/$log"); do
		echo "---- $1${3:+ (static)}: ${t%.test}.log"
		tail -25 "$top/$1/${t%.test}.log" 2>/dev/null || true
	done >> "$top/failed-tests.log"
	awk '/^# (PASS|FAIL|SKIP|ERROR|XPASS|XFAIL): / { n[$2] = $3 }
	     END { printf "%d %d %d\n", n["PASS:"] + n["XFAIL:"], n["FAIL:"] + n["ERROR:"] + n["XPASS:"], n["SKIP:"] }' \
		"$top/$1/$log" >&3
}

# check_arm64: the arm64 tests (tests/arm64-guest.test, then
# tests/arm64/*.test), each booting the guest, one after the other
check_arm64() {
	mkdir -p "$top/build-arm64"
	p=0 f=0 s=0
	for t in "$top"/tests/arm64-guest.test "$top"/tests/arm64/*.test; do
		[ -f "$t" ] || continue
		n=$(basename "$t" .test)
		rc=0
		srcdir=$top sh "$t" > "$top/build-arm64/$n.log" 2>&1 || rc=$?
		case $rc in
		0) p=$((p + 1)); echo "PASS: $n" ;;
		77) s=$((s + 1)); echo "SKIP: $n: $(tail -1 "$top/build-arm64/$n.log")" ;;
		*) f=$((f + 1)); echo "FAIL: $n"; tail -25 "$top/build-arm64/$n.log" >&2 ;;
		esac
	done
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
}

[ "$what" != check-arm64 ] || { check_arm64; exit; }
install_deps
cd "$top"
[ -x configure ] || autoreconf -fi > /dev/null 2>&1
if [ -f config.status ]; then
	echo "setup: $top is configured in-tree; run 'make distclean' there first" >&2
	exit 1
fi

case $what in
demo)
	build build
	"$top/scripts/demo.sh" "$top/build"
	;;
check)
	build build
	build build-asan --enable-sanitizers
	# memtap-static, tested by build's tests/static-binary.test (skipped
	# when Zydis' source package cannot be fetched: exit status 77).
	static=$top/build-static/memtap-static
	rc=0
	"$top/scripts/build-static.sh" "$top/build-static" --enable-werror > "$top/build-static.log" 2>&1 || rc=$?
	case $rc in
	0) ;;
	77) static=; tail -1 "$top/build-static.log" >&2 ;;
	*) tail -30 "$top/build-static.log" >&2; exit 1 ;;
	esac
	# the whole suite once more against memtap-static, last: the normal
	# run's test logs are overwritten by its own
	rm -f "$top/failed-tests.log"
	counts=$( { check build "$static"; check build-asan
		   [ -z "$static" ] || check build "$static" check-static.log; } 3>&1 1>&2 )
	[ ! -s "$top/failed-tests.log" ] || cat "$top/failed-tests.log" >&2
	echo "$counts" | awk '{ p += $1; f += $2; s += $3 }
		END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit f > 0 }'
	;;
*)
	echo "usage: scripts/setup.sh demo|check|check-arm64" >&2
	exit 64
	;;
esac
