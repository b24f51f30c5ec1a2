#!/bin/bash
# bench/redis.sh - what a long attached recording costs a server:
# redis-server under redis-benchmark, its throughput untraced and with
# memtap -p --leaks -i INTERVAL --record attached (the default sampled
# allocator probes), in pairs whose order flips.  A time-compressed
# stand-in for hours at -i 60: INTERVAL 1 s over DURATION seconds.
# Also memtap's peak RSS (VmHWM) and the recording's size.
#
#   bench/redis.sh [-r N] [-d SECONDS] [-i SECONDS] [-m MEMTAP]
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

while getopts "r:d:i:m:h" c; do
	case $c in
	r) reps=$OPTARG ;;
	d) duration=$OPTARG ;;
	i) interval=$OPTARG ;;
	m) memtap=$OPTARG ;;
	*) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 64 ;;
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

ratios=() hwms=() sizes=()
for r in $(seq 1 "$reps"); do
	redis-cli -p "$port" flushall > /dev/null
	if [ $((r % 2)) -eq 1 ]; then
		base=$(load "$duration")
	fi
	"$memtap" -p "$rpid" --leaks -i "$interval" --record "$work/rec.json" \
		-o "$work/m.out" 2> "$work/m.err" &
	mpid=$!
	for _ in $(seq 300); do
		grep -q 'attached to process' "$work/m.err" 2>/dev/null && break
		sleep 0.1
	done
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
