#!/bin/bash
# bench/pauses.sh - how long memtap leaves a thread waiting: the longest
# pause of any thread of an allocating process, traced with `-e alloc
# -d SECONDS` and untraced, and how long after -d memtap exits.
#
# The workload is tests/targets/alloc-pause.c: T threads call malloc and
# free without pause, each timing the longest gap between two of its
# iterations inside a window that SIGUSR1 opens and SIGUSR2 closes.
# Traced: memtap attaches; when it says so (the probes are in, -d counts
# from there) the window opens; it closes when memtap has exited, so
# that detaching is inside it.  Untraced: the same window, as long.
#
# Output: Markdown on stdout.  Progress goes to stderr.

set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

reps=3 duration=3 events=alloc threads_list="8 200"
memtap=${MEMTAP:-} cc=${CC:-cc} workdir='' keep=no

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]
The longest pause of any thread of an allocating process under memtap
-e alloc -d SECONDS, against the same process untraced, and the time
memtap takes to exit after -d.

  -r, --reps=N         runs per cell [$reps]
  -T, --threads=LIST   thread counts [${threads_list// /,}]
  -d, --duration=SECS  memtap's -d, and the untraced window [$duration]
  -e, --events=LIST    memtap's -e [$events]
  -m, --memtap=PATH    memtap binary [\$MEMTAP, else ../memtap next to
                       bench/, else memtap in PATH]
      --workdir=DIR    build the workload and keep outputs in DIR
      --keep           do not remove the temporary directory
      --cc=CC          C compiler for the workload [$cc]
  -h, --help           show this help and exit

Goal: no thread's longest pause above 10 x the untraced one + 50 ms, and
memtap gone within 100 ms of -d.
EOF
}

# options: --opt=value is split in two; every option but --keep and
# --help takes a value
while [ $# -gt 0 ]; do
	case $1 in
	--*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
	esac
	case $1 in
	-h | --help) usage && exit 0 ;;
	--keep) keep=yes && shift && continue ;;
	-r | --reps | -T | --threads | -d | --duration | -e | --events) ;;
	-m | --memtap | --workdir | --cc) ;;
	*) usage >&2 && exit 64 ;;
	esac
	[ $# -ge 2 ] || die "option $1 needs an argument"
	case $1 in
	-r | --reps) reps=$2 ;;
	-T | --threads) threads_list=${2//,/ } ;;
	-d | --duration) duration=$2 ;;
	-e | --events) events=$2 ;;
	-m | --memtap) memtap=$2 ;;
	--workdir) workdir=$2 ;;
	--cc) cc=$2 ;;
	esac
	shift 2
done

case $reps in
'' | *[!0-9]* | 0) die "--reps: not a positive number: $reps" ;;
esac
for th in $threads_list; do
	case $th in
	'' | *[!0-9]* | 0) die "--threads: not a positive number: $th" ;;
	esac
done
awk -v s="$duration" 'BEGIN { exit !(s + 0 > 0) }' || die "--duration: not a positive number: $duration"

find_memtap
make_workdir memtap-pauses
src=$here/../tests/targets/alloc-pause.c
[ -f "$src" ] || die "no $src"
"$cc" -O2 -g -Wall -Wextra -fPIE -pie -pthread -o "$workdir/bin/alloc-pause" "$src" ||
	die "cannot build $src"
target=$workdir/bin/alloc-pause

tpid=
mpid=
cleanup_run() {
	[ -n "$mpid" ] && kill -INT "$mpid" 2>/dev/null && wait "$mpid" 2>/dev/null
	[ -n "$tpid" ] && kill -KILL "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	mpid='' tpid=''
	return 0
}
trap 'cleanup_run' INT TERM

# nap: sleep 5 ms without a fork (a fork takes longer than that under load)
exec {nap_fd}<> <(:)
nap() {
	read -r -t 0.005 -u "$nap_fd" _ || true
}

# wait_line FILE REGEX: poll until a line of FILE matches
wait_line() {
	local i=0 line
	while :; do
		if [ -f "$1" ]; then
			while read -r line; do
				[[ $line =~ $2 ]] && return 0
			done < "$1"
		fi
		i=$((i + 1))
		[ $i -lt 12000 ] || die "timed out waiting for /$2/ in $1"
		nap
	done
}

# traced PID: 0 once no tracer holds PID
traced() {
	local line
	while read -r line; do
		case $line in
		TracerPid:*) [ "${line##*[!0-9]}" != 0 ] && return 0 || return 1 ;;
		esac
	done < "/proc/$1/status"
	return 1
}

# ms_after T0 T1: (T1 - T0) in ms minus the duration
ms_after() {
	awk -v a="$1" -v b="$2" -v d="$duration" 'BEGIN { printf "%d", (b - a) / 1000 - d * 1000 }'
}

# one_run THREADS MODE OUT: a window untraced or traced; prints
# "max_pause_us min_iters detach_after_ms exit_after_ms" (traced: the
# window closes when memtap has detached; - untraced).  detach_after_ms
# is by memtap's clock (its -vv line), exit_after_ms by this script's.
one_run() {
	local n=$1 mode=$2 out=$3 t0 t1 t2 detach=- exit=-
	"$target" -t "$n" > "$out.t" &
	tpid=$!
	wait_line "$out.t" '^ready$'
	if [ "$mode" = traced ]; then
		"$memtap" -vv -e "$events" -d "$duration" -o "$out.m" -p "$tpid" 2> "$out.err" &
		mpid=$!
		wait_line "$out.err" 'attached to process'
		t0=${EPOCHREALTIME/[.,]/}
		kill -USR1 "$tpid"
		while traced "$tpid"; do
			nap
		done
		t1=${EPOCHREALTIME/[.,]/}
		kill -USR2 "$tpid"
		wait "$mpid" || die "memtap exit status $?: $(cat "$out.err")"
		t2=${EPOCHREALTIME/[.,]/}
		mpid=
		# memtap's own clock: "detached in X ms, Y ms after the probes were in"
		detach=$(awk -v d="$duration" '/detached in .* after the probes were in/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ms" && $(i + 2) == "after") y = $i
			printf "%.1f", y - d * 1000 }' "$out.err")
		[ -n "$detach" ] || detach=$(ms_after "$t0" "$t1")
		exit=$(ms_after "$t0" "$t2")
	else
		kill -USR1 "$tpid"
		sleep "$duration"
		kill -USR2 "$tpid"
	fi
	wait "$tpid" || die "target exit status $?"
	tpid=
	awk -v d="$detach" -v e="$exit" '$1 == "max_pause_us" { p = $2 } $1 == "min_iters" { m = $2 }
		END { print p, m, d, e }' "$out.t"
}

log "workload: alloc-pause, threads ${threads_list// /,}, -e $events -d $duration, $reps runs per cell"
echo "# Longest pause of any thread: memtap -e $events -d $duration -p PID vs untraced"
echo
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $reps runs per cell."
echo
echo "| threads | run | untraced max pause ms | untraced min iters | traced max pause ms | traced min iters | detached after -d ms (memtap's clock) | exited after -d ms | goal (10 × untraced + 50 ms; detach ≤ 100 ms) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for n in $threads_list; do
	for r in $(seq 1 "$reps"); do
		log "threads $n, run $r: untraced"
		read -r up um _ <<< "$(one_run "$n" untraced "$workdir/out/u.$n.$r")"
		log "threads $n, run $r: traced"
		read -r tp tm td te <<< "$(one_run "$n" traced "$workdir/out/t.$n.$r")"
		goal=$(awk -v u="$up" -v t="$tp" -v a="$td" 'BEGIN {
			ok = t <= 10 * u + 50000 ? "met" : "missed"
			if (a > 100) ok = ok ", detach late"
			print ok }')
		printf '| %s | %s | %.1f | %s | %.1f | %s | %s | %s | %s |\n' "$n" "$r" \
			"$(awk -v v="$up" 'BEGIN { print v / 1000 }')" "$um" \
			"$(awk -v v="$tp" 'BEGIN { print v / 1000 }')" "$tm" "$td" "$te" "$goal"
	done
done
