#!/bin/bash
# bench/redis.sh - what a long attached recording costs a server:
# redis-server under redis-benchmark, its throughput untraced and with
# memtap -p --leaks -i INTERVAL --record attached (the default sampled
# allocator probes), in pairs whose order flips.  A time-compressed
# stand-in for hours at -i 60: INTERVAL 1 s over DURATION seconds.
# Also memtap's peak RSS (VmHWM) and the recording's size.
#
#   bench/redis.sh [-r N] [-d SECONDS] [-i SECONDS] [-m MEMTAP]
#   bench/redis.sh --html-check [-d SECONDS] [-i SECONDS] [-m MEMTAP] [-k DIR]
#
# --html-check: one attached recording (DURATION 600 s unless -d), its
# timeline page (memtap report -F html) opened in headless chromium by
# tests/html-check.js, which fails on any script or console error or
# network request and on any figure of the page (the memory chart's
# series, the suspects' table, flame graph totals of selected ranges)
# that differs from the same figure computed from the recording's JSON
# apart from memtap.  Exit 0 when all agree, 1 with the failed checks
# on stderr, 77 without chromium, node or redis.  -k DIR keeps the
# recording, the page and the checks' output there.  Needs node and
# chromium like make check's browser tests (playwright-core installed
# into tests/out-node of the build tree, as they install it).
#
# Needs redis-server and redis-benchmark (Debian: redis-server,
# redis-tools).  Output: Markdown on stdout, progress on stderr.  Not a
# pass/fail test; the server listens on 127.0.0.1 only.
set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
reps=3
duration=60
interval=1
memtap=${MEMTAP:-$here/../memtap}
html=0 keep=
if [ "${1:-}" = --html-check ]; then
	html=1 duration=600
	shift
fi

while getopts "r:d:i:m:k:h" c; do
	case $c in
	r) reps=$OPTARG ;;
	d) duration=$OPTARG ;;
	i) interval=$OPTARG ;;
	m) memtap=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) sed -n '2,27s/^# \{0,1\}//p' "$0"; exit 64 ;;
	esac
done
command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null ||
	{ echo "$prog: needs redis-server and redis-benchmark" >&2; exit 77; }
[ -x "$memtap" ] || { echo "$prog: no memtap at $memtap" >&2; exit 64; }

work=$(mktemp -d "${TMPDIR:-/tmp}/memtap-redis.XXXXXX")
port=$((20000 + $$ % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
	--daemonize no > "$work/redis.log" 2>&1 &
rpid=$!
trap 'kill "$rpid" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
	redis-cli -p "$port" ping > /dev/null 2>&1 && break
	sleep 0.1
done

# load SECONDS: redis-benchmark for about SECONDS; prints requests/s
load() {
	local end=$((SECONDS + $1)) n=0 total=0 rps
	while [ $SECONDS -lt $end ]; do
		rps=$(redis-benchmark -p "$port" -q -t set,get,lpush,lpop -n 50000 -d 256 -r 100000 --csv |
			awk -F'"' 'NR > 1 { s += $4; n++ } END { printf "%d", n ? s / n : 0 }')
		total=$((total + rps))
		n=$((n + 1))
	done
	echo $((total / n))
}

# attach: memtap attached to the server, recording to $work/rec.json;
# mpid its pid, once it has said so
attach() {
	"$memtap" -p "$rpid" --leaks -i "$interval" --record "$work/rec.json" \
		-o "$work/m.out" 2> "$work/m.err" &
	mpid=$!
	for _ in $(seq 300); do
		grep -q 'attached to process' "$work/m.err" 2>/dev/null && break
		sleep 0.1
	done
}

# html_check: the --html-check run
html_check() {
	local top_builddir top_srcdir modules chromium st
	top_srcdir=$here/..
	# a build tree's tests/out-node, where make check installs playwright-core
	top_builddir=$(cd "$(dirname "$memtap")" && pwd)
	[ -f "$top_builddir/Makefile" ] || top_builddir=$work
	fail() { echo "$prog: $*" >&2; exit 1; }
	. "$top_srcdir/tests/browser-lib.sh"
	echo "$prog: recording ${duration} s at -i $interval" >&2
	attach
	load "$duration" > /dev/null
	kill -INT "$mpid"
	wait "$mpid" || fail "memtap exit status $?: $(tail -3 "$work/m.err")"
	"$memtap" report -F html -o "$work/page.html" "$work/rec.json" ||
		fail "memtap report -F html"
	"$memtap" report --suspects "$work/rec.json" > "$work/suspects.txt" ||
		fail "memtap report --suspects"
	mkdir "$work/profile"
	st=0
	HOME=$work timeout 600 node "$top_srcdir/tests/html-check.js" "$modules" "$chromium" \
		"$work/profile" "$work/rec.json" "$work/page.html" "$work/suspects.txt" \
		> "$work/check.out" 2>&1 || st=$?
	if [ -n "$keep" ]; then
		mkdir -p "$keep"
		cp "$work/rec.json" "$work/page.html" "$work/suspects.txt" "$work/check.out" "$keep/"
	fi
	echo "| recording | intervals | stacks | recording (bytes) | page (bytes) | checks |"
	echo "|---|---|---|---|---|---|"
	echo "| redis-benchmark, ${duration} s at -i $interval --leaks |" \
		"$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			console.log(r.intervals.length + " | " + r.samples.length)' "$work/rec.json") |" \
		"$(stat -c %s "$work/rec.json") | $(stat -c %s "$work/page.html") | $(grep -c '^ok: ' "$work/check.out") passed," \
		"$(grep -c '^FAIL: ' "$work/check.out") failed |"
	if [ $st -ne 0 ]; then
		grep -v '^ok: ' "$work/check.out" | sed "s/^/$prog: /" >&2
		echo "$prog: the page differs from the recording (or the check failed, status $st)" >&2
		exit 1
	fi
	echo "$prog: the page agrees with the recording" >&2
}
if [ $html = 1 ]; then
	html_check
	exit 0
fi

ratios=() hwms=() sizes=()
for r in $(seq 1 "$reps"); do
	redis-cli -p "$port" flushall > /dev/null
	if [ $((r % 2)) -eq 1 ]; then
		base=$(load "$duration")
	fi
	attach
	traced=$(load "$duration")
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$mpid/status")
	kill -INT "$mpid"
	wait "$mpid" || true
	if [ $((r % 2)) -eq 0 ]; then
		redis-cli -p "$port" flushall > /dev/null
		base=$(load "$duration")
	fi
	ratio=$(awk -v b="$base" -v t="$traced" 'BEGIN { printf "%.3f", t / b }')
	size=$(stat -c %s "$work/rec.json")
	echo "$prog: rep $r: requests/s untraced $base, traced $traced ($ratio), memtap VmHWM $hwm KiB, recording $size bytes" >&2
	ratios+=("$ratio")
	hwms+=("$hwm")
	sizes+=("$size")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "| workload | throughput traced/untraced | memtap VmHWM (KiB) | recording (bytes) |"
echo "|---|---|---|---|"
echo "| redis-benchmark, ${duration} s at -i $interval --leaks | $(median "${ratios[@]}") | $(median "${hwms[@]}") | $(median "${sizes[@]}") |"
