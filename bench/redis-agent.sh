#!/bin/bash
# bench/redis-agent.sh - what a long-running memtap costs a server, and
# whether memtap's own memory stays flat: two redis-servers of the same
# binary on 127.0.0.1, one followed by memtap for the whole run (by
# default `memtap agent --comm redis-server`), one untraced (run under
# another name, redis-untraced, so that no --comm selects it), and
# redis-benchmark against each in turn, alternating (ABAB..., the order
# flipped on every pair) until DURATION is up.  Per test (SET, GET,
# LPUSH, LPOP), value size and pipelining: the median of traced /
# untraced throughput over the pairs and its min-max.  memtap's RSS
# every minute (first, last, max; VmHWM) and its CPU seconds.
#
#   bench/redis-agent.sh [-d SECONDS] [-n REQUESTS] [-m MEMTAP]
#
# -d SECONDS (or DURATION; default 60): how long to run pairs (at least
# one round); DURATION=3600 for an hour.  -n REQUESTS (default 20000):
# requests per test unpipelined, ten times that with -P 16.  -m MEMTAP:
# the binary ($MEMTAP, else ../memtap next to bench/, else memtap in
# PATH).  MEMTAP_CMD: the traced command, with PID (the traced server)
# and DURATION (the run's, plus a margin) replaced, e.g.
#     MEMTAP_CMD='memtap -p PID -e alloc --exact -d DURATION -o /dev/null'
# (a leading "memtap" is the binary above).  Default: `memtap agent
# --comm redis-server` when `memtap agent --help` works (-p PID in place
# of --comm when another redis-server runs on the machine), else
# `memtap -p PID -d DURATION -o /dev/null`.
#
# Needs redis-server and redis-benchmark (Debian: redis-server,
# redis-tools; installed with apt-get when missing and run as root,
# else exit 77).  Output: Markdown on stdout, progress on stderr.  Not
# a pass/fail test; the servers listen on 127.0.0.1 only, keep nothing
# on disk and run in a temporary directory of their own.
set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

duration=${DURATION:-60}
requests=20000
memtap=${MEMTAP:-}
workdir='' keep=no

while getopts "d:n:m:h" c; do
	case $c in
	d) duration=$OPTARG ;;
	n) requests=$OPTARG ;;
	m) memtap=$OPTARG ;;
	h) sed -n '2,32s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) sed -n '2,32s/^# \{0,1\}//p' "$0" >&2; exit 64 ;;
	esac
done
case $duration in '' | *[!0-9]* | 0) die "-d: not a positive number of seconds: $duration" ;; esac
case $requests in '' | *[!0-9]* | 0) die "-n: not a positive number: $requests" ;; esac

if ! command -v redis-server > /dev/null || ! command -v redis-benchmark > /dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
		log "installing redis-server and redis-tools"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server redis-tools >&2 ||
			{ log "apt-get install redis-server redis-tools failed"; exit 77; }
	else
		log "needs redis-server and redis-benchmark (Debian: apt-get install redis-server redis-tools, as root)"
		exit 77
	fi
fi
find_memtap
make_workdir memtap-redis-agent

# free_port: a TCP port nothing listens on (in /proc/net/tcp and tcp6)
free_port() {
	local p hex
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 30000))
		hex=$(printf ':%04X ' "$p")
		cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A"' |
			grep -q -- "$hex" || { echo "$p"; return 0; }
	done
	die "no free port found"
}

# start_server NAME DIR: redis-server run as NAME (a symbolic link, so
# that its comm is NAME) in DIR; sets port and spid
start_server() {
	mkdir -p "$2"
	ln -sf "$(command -v redis-server)" "$workdir/bin/$1"
	port=$(free_port)
	(cd "$2" && exec "$workdir/bin/$1" --port "$port" --bind 127.0.0.1 --save "" \
		--appendonly no --dir "$2" --daemonize no > "$2/log" 2>&1) &
	spid=$!
	for _ in $(seq 100); do
		redis-cli -p "$port" ping > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "$1 did not start: $(tail -n 3 "$2/log")"
}

mpid=
servers=
cleanup() {
	[ -z "$mpid" ] || kill -TERM "$mpid" 2>/dev/null || true
	for p in $servers; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	[ "$keep" = yes ] || rm -rf "$workdir"
}
trap cleanup EXIT

start_server redis-server "$workdir/traced"
tport=$port tpid=$spid servers=$spid
start_server redis-untraced "$workdir/untraced"
uport=$port servers="$servers $spid"

# the traced command
if [ -z "${MEMTAP_CMD:-}" ]; then
	if PATH=/nonexistent "$memtap" agent --help > /dev/null 2>&1; then
		others=$(pgrep -x redis-server | grep -vx "$tpid" || true)
		if [ -z "$others" ]; then
			MEMTAP_CMD='memtap agent --comm redis-server'
		else
			log "other redis-server processes run ($(echo "$others" | tr "\n" " ")): -p PID, not --comm"
			MEMTAP_CMD='memtap agent -p PID'
		fi
	else
		MEMTAP_CMD='memtap -p PID -d DURATION -o /dev/null'
	fi
fi
cmd=${MEMTAP_CMD//PID/$tpid}
cmd=${cmd//DURATION/$((duration * 2 + 120))}
[ "${cmd%% *}" != memtap ] || cmd="$memtap ${cmd#memtap }"
log "traced: $cmd"
bash -c "exec $cmd" > "$workdir/out/memtap.out" 2> "$workdir/out/memtap.err" &
mpid=$!

# tracer PID: the TracerPid of process PID
tracer() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
for i in $(seq 1200); do
	[ "$(tracer "$tpid")" = 0 ] || break
	kill -0 "$mpid" 2>/dev/null || die "memtap exited: $(tail -n 3 "$workdir/out/memtap.err")"
	[ "$i" -lt 1200 ] || die "memtap did not attach in 60 s: $(tail -n 3 "$workdir/out/memtap.err")"
	sleep 0.05
done
# the tracer is memtap or one of its threads
grep -q "^Tgid:[[:space:]]*$mpid$" "/proc/$(tracer "$tpid")/status" 2>/dev/null ||
	die "redis-server is traced by $(tracer "$tpid"), not by memtap ($mpid)"

# rss: memtap's VmRSS in KiB; cpu: its user + system CPU seconds
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$mpid/status"; }
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
		"/proc/$mpid/stat"
}
t0=$SECONDS
cpu0=$(cpu)
echo "0 $(rss)" > "$workdir/out/rss"
next_sample=$((t0 + 60))
sample() {
	if [ $SECONDS -ge $next_sample ]; then
		echo "$((SECONDS - t0)) $(rss)" >> "$workdir/out/rss"
		next_sample=$((next_sample + 60))
	fi
}

# bench PORT SIZE PIPELINE: redis-benchmark; "TEST RPS" lines
bench() {
	local n=$requests
	[ "$3" = 1 ] || n=$((requests * 10))
	redis-benchmark -p "$1" -q -t set,get,lpush,lpop -n "$n" -d "$2" -P "$3" -r 10000 --csv |
		awk -F'"' 'NR > 1 && NF > 3 { print $2, $4 }'
}

configs="64/1 1024/1 64/16 1024/16"
: > "$workdir/out/pairs"
pair=0 round=0
while :; do
	round=$((round + 1))
	for c in $configs; do
		size=${c%/*} pl=${c#*/}
		pair=$((pair + 1))
		kill -0 "$mpid" 2>/dev/null || die "memtap exited during the run: $(tail -n 3 "$workdir/out/memtap.err")"
		if [ $((pair % 2)) -eq 1 ]; then
			bench "$uport" "$size" "$pl" > "$workdir/out/u"
			bench "$tport" "$size" "$pl" > "$workdir/out/t"
		else
			bench "$tport" "$size" "$pl" > "$workdir/out/t"
			bench "$uport" "$size" "$pl" > "$workdir/out/u"
		fi
		# pairs: TEST SIZE PIPELINE UNTRACED TRACED
		awk -v s="$size" -v p="$pl" 'FNR == NR { u[$1] = $2; next }
			($1 in u) { print $1, s, p, u[$1], $2 }' "$workdir/out/u" "$workdir/out/t" \
			>> "$workdir/out/pairs"
		sample
	done
	log "round $round ($((SECONDS - t0)) s): memtap RSS $(rss) KiB, CPU $(cpu) s"
	[ $((SECONDS - t0)) -lt "$duration" ] || break
done
elapsed=$((SECONDS - t0))
# the end's sample, unless the last minute's was taken just now
[ "$(tail -n 1 "$workdir/out/rss" | cut -d' ' -f1)" = "$elapsed" ] ||
	echo "$elapsed $(rss)" >> "$workdir/out/rss"
cpu1=$(cpu)
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$mpid/status")
kill -TERM "$mpid"
st=0
wait "$mpid" || st=$?
mpid=

echo "# memtap following redis-server: $(redis-server --version | awk '{ print $3 }')"
echo
echo "- traced: \`${MEMTAP_CMD}\` (memtap $("$memtap" --version | awk '{ print $2 }'))"
echo "- $round rounds in $elapsed s, $pair pairs; order flipped on every pair;" \
	"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- redis-benchmark -t set,get,lpush,lpop -r 10000, -n $requests unpipelined," \
	"-n $((requests * 10)) with -P 16"
echo "- memtap exit status after SIGTERM: $st; CPU s in all, its attach included: $cpu1"
echo
echo "| test | value bytes | pipeline | untraced req/s | traced/untraced | min-max | untraced spread | pairs |"
echo "|---|---|---|---|---|---|---|---|"
for c in $configs; do
	for t in SET GET LPUSH LPOP; do
		awk "$awk_median"'
			$1 == t && $2 == s && $3 == p { n++; u[n] = $4; r[n] = $5 / $4
				if (n == 1 || r[n] < lo) lo = r[n]; if (n == 1 || r[n] > hi) hi = r[n]
				if (n == 1 || $4 < ulo) ulo = $4; if (n == 1 || $4 > uhi) uhi = $4 }
			END { if (n) printf "| %s | %s | %s | %.0f | %.3f | %.3f-%.3f | %.2f | %d |\n",
				t, s, p, median(u, n), median(r, n), lo, hi, uhi / ulo, n }' \
			t="$t" s="${c%/*}" p="${c#*/}" "$workdir/out/pairs"
	done
done
echo
awk -v cpu0="$cpu0" -v cpu1="$cpu1" -v hwm="$hwm" -v el="$elapsed" '
	{ n++; t[n] = $1; r[n] = $2; if ($2 > max) max = $2 }
	END {
		printf "| memtap RSS first (KiB) | last | max | VmHWM | samples | CPU s | CPU s per minute |\n"
		printf "|---|---|---|---|---|---|---|\n"
		printf "| %d | %d | %d | %d | %d | %.2f | %.2f |\n", r[1], r[n], max, hwm, n,
			cpu1 - cpu0, el ? (cpu1 - cpu0) * 60 / el : 0
	}' "$workdir/out/rss"
echo
echo "RSS samples (s KiB): $(tr '\n' ' ' < "$workdir/out/rss")"
