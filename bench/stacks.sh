#!/bin/bash
# bench/stacks.sh - what a stack at each memory event costs a command,
# by unwinder and stack depth, and whether the stacks are right.
#
# The workload (workloads/deepmap.c) makes mmap/munmap (and mremap)
# calls in a loop DEPTH functions down, built with and without frame
# pointers.  Each measurement is a pair: the workload untraced and the
# workload traced, back to back (the order flips on every repetition);
# the pairs of every tool and depth are interleaved.  A cell is the
# median over the repetitions of traced/untraced, and of (traced -
# untraced) / events.  Every traced run's folded output is checked: the
# loop's stack must hold the whole chain main;dm_00;...;deep_leaf with
# the bytes the workload reports; a separate count-weighted run per
# unwinder, build and depth checks the mmap, munmap and mremap counts.
#
# Output: Markdown on stdout.  Progress goes to stderr.

set -eu

prog=${0##*/}
args=("$@")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

reps=9
rounds=4000
strace_rounds=40
check_rounds=64
scale=1
depths="5 30 60"
memtap=${MEMTAP:-}
tools="none fp dwarf dwarf-fp libunwind strace-k"
pin=
workdir=
keep=no
cc=${CC:-cc}
bpcost=auto

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]
Cost of unwinding a stack at each memory syscall: memtap's unwinders
(--unwind=none, fp, dwarf, libunwind) against strace -k, at several stack
depths, on an mmap-heavy workload; and a check of the stacks memtap gives.

  -r, --reps=N          repetitions (pairs untraced/traced) per cell [$reps]
  -n, --rounds=N        workload rounds for memtap (about 2.06 memory
                        syscalls each) [$rounds]
      --strace-rounds=N workload rounds for strace -k, which costs
                        milliseconds per event [$strace_rounds]
      --check-rounds=N  rounds of the count-weighted correctness runs
                        [$check_rounds]
  -s, --scale=F         multiply the rounds (timed runs) by F [$scale]
  -d, --depths=LIST     stack depths (frames at the event, about; the
                        workload calls DEPTH-6 dm_ functions) [${depths// /,}]
  -t, --tools=LIST      some of: ${tools// /,}
                        (dwarf-fp: --unwind=dwarf on the frame-pointer build;
                        strace-k is skipped when strace is not installed)
  -m, --memtap=PATH     memtap binary [\$MEMTAP, else ../memtap next to
                        bench/, else memtap in PATH]
      --pin=CPU         run everything on CPU CPU (taskset): tracer and
                        tracee share it [not pinned]
      --bp-cost=WHEN    auto: also run bench/bp-cost.sh when memtap has
                        -e alloc; no: never [$bpcost]
      --workdir=DIR     build the workloads and keep outputs in DIR
                        (default: a temporary directory, removed at exit)
      --keep            do not remove the temporary directory
      --cc=CC           C compiler for the workload [$cc]
  -h, --help            show this help and exit

Example: $prog -r 11 -d 5,60 -t dwarf,libunwind,strace-k
EOF
}

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		arg=${opt#*=}
		opt=${opt%%=*}
		;;
	-[rndtms])
		[ $# -ge 2 ] || die "option $opt needs an argument"
		arg=$2
		shift
		;;
	-[rndtms]?*)
		arg=${opt#-?}
		opt=${opt%"$arg"}
		;;
	--reps | --rounds | --strace-rounds | --check-rounds | --scale | --depths | --tools | --memtap | --pin | --bp-cost | --workdir | --cc)
		[ $# -ge 2 ] || die "option $opt needs an argument"
		arg=$2
		shift
		;;
	*)
		arg=
		;;
	esac
	case $opt in
	-r | --reps) reps=$arg ;;
	-n | --rounds) rounds=$arg ;;
	--strace-rounds) strace_rounds=$arg ;;
	--check-rounds) check_rounds=$arg ;;
	-s | --scale) scale=$arg ;;
	-d | --depths) depths=${arg//,/ } ;;
	-t | --tools) tools=${arg//,/ } ;;
	-m | --memtap) memtap=$arg ;;
	--pin) pin=$arg ;;
	--bp-cost) bpcost=$arg ;;
	--workdir) workdir=$arg ;;
	--cc) cc=$arg ;;
	--keep) keep=yes ;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		usage >&2
		exit 64
		;;
	esac
	shift
done

number() { # number NAME VALUE MIN
	case $2 in
	'' | *[!0-9]*) die "$1: not a number: $2" ;;
	esac
	[ "$2" -ge "$3" ] || die "$1 must be at least $3"
}
number --reps "$reps" 1
number --rounds "$rounds" 16
number --strace-rounds "$strace_rounds" 16
number --check-rounds "$check_rounds" 16
awk -v s="$scale" 'BEGIN { exit !(s + 0 > 0) }' || die "--scale: not a positive number: $scale"
rounds=$(awk -v n="$rounds" -v s="$scale" 'BEGIN { n = int(n * s + 0.5); print n < 16 ? 16 : n }')
strace_rounds=$(awk -v n="$strace_rounds" -v s="$scale" 'BEGIN { n = int(n * s + 0.5); print n < 16 ? 16 : n }')
for d in $depths; do
	number --depths "$d" 1
	[ "$d" -le 76 ] || die "--depths: at most 76 (the workload has 70 dm_ functions)"
done
case $bpcost in
auto | no) ;;
*) die "--bp-cost: auto or no, not $bpcost" ;;
esac
for t in $tools; do
	case $t in
	none | fp | dwarf | dwarf-fp | libunwind | strace-k) ;;
	*) die "unknown tool: $t" ;;
	esac
done

find_memtap
"$memtap" --help 2>&1 | grep -q -e '--unwind' || die "$memtap has no --unwind option"

make_workdir memtap-stacks

# --- workload ----------------------------------------------------------

# Two builds of one source: frame pointers omitted (Debian's default at
# -O2) and kept.  No sibling calls, so that every dm_ frame is on the
# stack.
wflags=(-O2 -g -Wall -Wextra -fno-optimize-sibling-calls)
"$cc" "${wflags[@]}" -fomit-frame-pointer -o "$workdir/bin/deepmap-nofp" "$here/workloads/deepmap.c" ||
	die "cannot build $here/workloads/deepmap.c"
"$cc" "${wflags[@]}" -fno-omit-frame-pointer -o "$workdir/bin/deepmap-fp" "$here/workloads/deepmap.c" ||
	die "cannot build $here/workloads/deepmap.c"

# dm_ functions for a stack depth: _start, __libc_start_main,
# __libc_start_call_main, main, deep_leaf and the libc wrapper make 6
dm_count() {
	local n=$(($1 - 6))
	echo $((n < 0 ? 0 : n))
}

# the chain of frames the loop's stacks must hold, root first
chain() {
	local n i s=main
	n=$(dm_count "$1")
	for ((i = 0; i < n; i++)); do
		s+=$(printf ';dm_%02d' "$i")
	done
	echo "$s;deep_leaf"
}

# --- tools -------------------------------------------------------------

memsys=brk,mmap,munmap,mremap

tool_label() {
	case $1 in
	none) echo "memtap --unwind=none" ;;
	fp) echo "memtap --unwind=fp" ;;
	dwarf | dwarf-fp) echo "memtap --unwind=dwarf" ;;
	libunwind) echo "memtap --unwind=libunwind" ;;
	strace-k) echo "strace --seccomp-bpf -k" ;;
	esac
}

tool_build() {
	case $1 in
	fp | dwarf-fp) echo fp ;;
	*) echo nofp ;;
	esac
}

tool_rounds() {
	case $1 in
	strace-k) echo "$strace_rounds" ;;
	*) echo "$rounds" ;;
	esac
}

# tool_prefix TOOL OUTFILE: sets the array pre
tool_prefix() {
	case $1 in
	none | fp | dwarf | libunwind) pre=("$memtap" "--unwind=$1" -F folded -o "$2" --) ;;
	dwarf-fp) pre=("$memtap" --unwind=dwarf -F folded -o "$2" --) ;;
	strace-k) pre=(strace -f --seccomp-bpf -k -e "trace=$memsys" -o /dev/null) ;;
	esac
}

active=
skipped=
for t in $tools; do
	if [ "$t" = strace-k ] && ! command -v strace >/dev/null 2>&1; then
		skipped="$skipped $t"
	else
		active="$active $t"
	fi
done
[ -n "$active" ] || die "no tool to run"

# --- measuring ---------------------------------------------------------

# cpu_us FILE: CPU µs (user + system) of the waited-for children, from
# the output of `times` in FILE
cpu_us() {
	awk 'NR == 2 {
		for (i = 1; i <= 2; i++) {
			split($i, a, "m"); sub("s", "", a[2])
			s += a[1] * 60 + a[2]
		}
		printf "%d\n", s * 1e6
	}' "$1"
}

# timed OUT CMD...: runs CMD with stdout and stderr in OUT; prints
# "elapsed-µs cpu-µs" (CPU of CMD and its descendants, from `times` run
# in the shell that waits for CMD); fails when CMD does
timed() {
	local out=$1 t0 t1 rc=0
	shift
	times >"$out.times0"
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >"$out" 2>&1 </dev/null || rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	times >"$out.times1"
	echo "$((10#$t1 - 10#$t0)) $(($(cpu_us "$out.times1") - $(cpu_us "$out.times0")))"
	rm -f "$out.times0" "$out.times1"
	return $rc
}

# count_events DEPTH ROUNDS: sets ev to the memory syscalls the workload
# makes (as memtap --unwind=none counts them), cached
declare -A events_cache
count_events() {
	local key=$1:$2 f
	if [ -z "${events_cache[$key]:-}" ]; then
		f=$workdir/out/count.$1.$2
		"$memtap" -q --unwind=none -o "$f" -- "$workdir/bin/deepmap-nofp" "$(dm_count "$1")" "$2" \
			>/dev/null 2>&1 </dev/null || die "memtap failed counting events (see $f)"
		events_cache[$key]=$(awk '$1 == "total" && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$f")
		log "depth $1, $2 rounds: ${events_cache[$key]} memory syscalls"
	fi
	ev=${events_cache[$key]}
}

# check_bytes FOLDED WORKLOAD-LOG DEPTH: whether the loop's mmap stacks,
# and its mremap stacks, hold the whole chain and carry the bytes the
# workload reports: prints "MMAP-OK MREMAP-OK DETAIL", each ok or bad
check_bytes() {
	local want_mmap want_mremap
	read -r want_mmap want_mremap < <(sed -n \
		's/^deepmap: .* mmap \([0-9]*\) mremap \([0-9]*\) munmap.*/\1 \2/p' "$2")
	[ -n "${want_mmap:-}" ] || {
		echo "bad bad no-workload-line"
		return
	}
	awk -v chain=";$(chain "$3");" -v wm="$want_mmap" -v wr="$want_mremap" '
	{
		w = $NF; s = $0; sub(/ [0-9]+$/, "", s); s = s ";"
		if (index(s, chain) == 0)
			next
		if (s ~ /^\[mmap\];/) {
			m += w
			n = split(s, f, ";"); frames = n - 3; root = f[3]
		} else if (s ~ /^\[mremap\];/)
			r += w
	}
	END {
		print (m == wm ? "ok" : "bad"), (r == wr ? "ok" : "bad"),
			"mmap-bytes=" m + 0 "/" wm, "mremap-bytes=" r + 0 "/" wr
	}' "$1"
}

# check_counts FOLDED DEPTH ROUNDS: count-weighted output; per kind,
# "N/EXPECTED" calls whose stack holds the whole chain, and the frames
# and root of the mmap stack
check_counts() {
	awk -v chain=";$(chain "$2");" -v n="$3" '
	BEGIN { want["mmap"] = n; want["munmap"] = n; want["mremap"] = int(n / 16) }
	{
		w = $NF; s = $0; sub(/ [0-9]+$/, "", s); s = s ";"
		if (index(s, chain) == 0)
			next
		k = s; sub(/^\[/, "", k); sub(/\].*/, "", k)
		got[k] += w
		if (k == "mmap") { c = split(s, f, ";"); frames = c - 3; root = f[3] }
	}
	END {
		printf "%d/%d %d/%d %d/%d %d %s\n", got["mmap"], want["mmap"],
			got["munmap"], want["munmap"], got["mremap"], want["mremap"],
			frames, root == "" ? "-" : root
	}' "$1"
}

declare -A failed warned
pair() { # pair REP DEPTH TOOL ROUNDS (0: the start-up cell)
	local rep=$1 d=$2 t=$3 n=$4 us ut out rc=0 ok=- okr=- cmd sample
	out=$workdir/out/$d.$t.$n.$rep
	sample=$workdir/samples/$d.$t
	[ "$n" -gt 0 ] || sample=$sample.startup
	cmd=("$workdir/bin/deepmap-$(tool_build "$t")" "$(dm_count "$d")" "$n")
	tool_prefix "$t" "$out.folded"
	timed_pair "$rep" "$out" || rc=$?
	if [ $rc -ne 0 ]; then
		failed[$d:$t]="exit status $rc (see $out.log)"
		log "depth $d under $t failed: exit status $rc"
		return 0
	fi
	case $n:$t in
	0:*) ;;
	*:fp | *:dwarf | *:dwarf-fp | *:libunwind)
		read -r ok okr _ < <(check_bytes "$out.folded" "$out.log" "$d")
		if [ "$ok:$okr" != ok:ok ] && [ -z "${warned[$d:$t]:-}" ]; then
			warned[$d:$t]=1
			log "depth $d, $t, repetition $rep: stacks wrong: $(check_bytes "$out.folded" "$out.log" "$d")" \
				"(kept: $out.folded; said once per cell)"
		fi
		;;
	*:none)
		# no stacks asked for: the loop's mmaps under the command alone
		grep -q '^\[mmap\];deepmap-nofp [0-9]*$' "$out.folded" ||
			log "depth $d, none, repetition $rep: no stackless mmap line (kept: $out.folded)"
		;;
	esac
	echo "$us $ut $ok $okr" >>"$sample"
	case $ok:$okr in
	*bad*) ;; # kept for a look
	*) rm -f "$out.folded" ;;
	esac
	rm -f "$out.untraced"
}

# --- correctness -------------------------------------------------------

start=$(now_us)
load0=$(cut -d ' ' -f 1-3 /proc/loadavg)

declare -A correct
for d in $depths; do
	for u in fp dwarf libunwind; do
		for b in nofp fp; do
			f=$workdir/out/check.$d.$u.$b
			if "$memtap" -q "--unwind=$u" --weight=count -F folded -o "$f.folded" -- \
				"$workdir/bin/deepmap-$b" "$(dm_count "$d")" "$check_rounds" >"$f.log" 2>&1 </dev/null; then
				correct[$d:$u:$b]=$(check_counts "$f.folded" "$d" "$check_rounds")
			else
				correct[$d:$u:$b]="failed"
			fi
		done
	done
done
log "correctness runs done"

# --- timing ------------------------------------------------------------

for d in $depths; do
	for t in $active; do
		count_events "$d" "$(tool_rounds "$t")"
		count_events "$d" 0
	done
done
# cells DEPTH:TOOL:ROUNDS, with a start-up cell (0 rounds) for each
read -ra cells <<<"$(for d in $depths; do for t in $active; do
	printf '%s:%s:%s %s:%s:0 ' "$d" "$t" "$(tool_rounds "$t")" "$d" "$t"
done; done)"
for rep in $(seq 1 "$reps"); do
	log "repetition $rep/$reps"
	# rotate the order of the cells too, so that none is always first
	for ((i = 0; i < ${#cells[@]}; i++)); do
		IFS=: read -r d t n <<<"${cells[$(((i + rep) % ${#cells[@]}))]}"
		[ -z "${failed[$d:$t]:-}" ] || continue
		pair "$rep" "$d" "$t" "$n"
	done
done
load1=$(cut -d ' ' -f 1-3 /proc/loadavg)
elapsed=$((($(now_us) - start) / 1000000))

# --- report ------------------------------------------------------------

# stats FILE EVENTS: median untraced ms, median traced ms, median ratio,
# min ratio, max ratio, median µs/event, spread of the untraced runs
# (max/min), median CPU µs/event, runs whose stacks checked out (spaces
# as _), median µs added, median CPU µs added
stats() {
	awk -v ev="$2" "$awk_median"'
	{
		n++; u[n] = $1 / 1e3; t[n] = $3 / 1e3; r[n] = $3 / $1
		p[n] = ($3 - $1) / ev; c[n] = ($4 - $2) / ev; a[n] = $3 - $1; ac[n] = $4 - $2
		if (n == 1 || $1 < umin) umin = $1
		if (n == 1 || $1 > umax) umax = $1
		if ($5 == "ok") ok++
		if ($6 == "ok") okr++
		if ($5 == "-") na++
	}
	END {
		if (n == 0) exit 1
		rmin = r[1]; rmax = r[1]
		for (i = 1; i <= n; i++) { if (r[i] < rmin) rmin = r[i]; if (r[i] > rmax) rmax = r[i] }
		printf "%.0f %.0f %.2f %.2f %.2f %.1f %.2f %.1f %s %.0f %.0f\n", median(u, n), median(t, n),
			median(r, n), rmin, rmax, median(p, n), umax / umin, median(c, n),
			na == n ? "–" : (ok == n && okr == n ? "✓" : \
			"mmap_" (ok == n ? "✓" : "✗_" ok + 0 "/" n) ",_mremap_" (okr == n ? "✓" : "✗_" okr + 0 "/" n)),
			median(a, n), median(ac, n)
	}' "$1"
}

echo "# memtap benchmark: a stack at each memory event"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(uname -r) $(uname -m), $(nproc) CPUs"
echo "- load average: $load0 at start, $load1 at end; suite took ${elapsed} s"
echo "- run as: \`bench/$prog${args[*]:+ ${args[*]}}\`"
echo "- repetitions: $reps pairs (untraced, traced) per cell, order flipped every repetition,"
echo "  cells interleaved; workload: deepmap DEPTH-6 N (workloads/deepmap.c): N rounds of"
echo "  mmap 1–16 pages, touch each page, munmap (mremap every 16th round), N = $rounds"
echo "  ($strace_rounds under strace -k)"
report_pin
echo "- memtap: $("$memtap" --version 2>&1 | head -n 1)"
case " $active " in
*" strace-k "*) echo "- strace: $(strace -V 2>&1 | head -n 1)" ;;
esac
for t in $skipped; do
	echo "- $(tool_label "$t"): not installed, skipped"
done
echo
echo "Command lines: \`memtap --unwind=METHOD -F folded -o FILE -- deepmap D N\`;"
echo "\`strace -f --seccomp-bpf -k -e trace=$memsys -o /dev/null deepmap D N\`."
echo "Builds: nofp = \`-O2 -g -fno-optimize-sibling-calls -fomit-frame-pointer\`, fp = the same"
echo "with \`-fno-omit-frame-pointer\` (glibc itself has no frame pointers in either)."
echo
echo "slowdown = median over the pairs of traced/untraced wall time (range: min–max);"
echo "spread = slowest / fastest untraced run of the cell: above 1.3 other work competed;"
echo "µs/event = median of (traced − untraced) / memory syscalls made by the run;"
echo "start-up ms = median of traced − untraced for the same command with 0 rounds (the"
echo "tool's fixed cost: start, module and symbol loading, report; ~12 events);"
echo "net µs/event = (median added − start-up) / (events − start-up events): the cost of"
echo "one more event, the figure to compare between tools (strace's runs are short);"
echo "CPU µs/event = the same, net, for user+system CPU of the command and its children"
echo "(tracer and target: unwinding costs CPU even where the target does not wait for it);"
echo "stacks = every traced run's folded output gave the loop's mmap and mremap bytes to"
echo "the whole chain main;dm_00;…;deep_leaf (– : no stacks asked for)."

# net VALUE-ADDED STARTUP-ADDED EVENTS STARTUP-EVENTS: per event, net of start-up
net() {
	awk -v a="$1" -v s="$2" -v e="$3" -v e0="$4" 'BEGIN {
		if (a == "" || s == "" || e <= e0) print "–"; else printf "%.1f\n", (a - s) / (e - e0) }'
}

declare -A us_event
declare -A ratio
for d in $depths; do
	echo
	echo "## depth ~$d: $(dm_count "$d") dm_ functions between main and deep_leaf"
	echo
	echo "| tool | build | rounds | events | untraced ms | traced ms | slowdown | range | spread | µs/event | start-up ms | **net µs/event** | CPU µs/event | stacks |"
	echo "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|:---:|"
	count_events "$d" 0
	ev0=$ev
	for t in $active; do
		n=$(tool_rounds "$t")
		count_events "$d" "$n"
		if [ -n "${failed[$d:$t]:-}" ] || [ ! -s "$workdir/samples/$d.$t" ]; then
			echo "| $(tool_label "$t") | $(tool_build "$t") | $n | $ev | | | failed: ${failed[$d:$t]:-no sample} | | | | | | | |"
			continue
		fi
		read -r mu mt mr rmin rmax mp spread _ okcol add addc < <(stats "$workdir/samples/$d.$t" "$ev")
		add0=
		addc0=
		if [ -s "$workdir/samples/$d.$t.startup" ]; then
			read -r _ _ _ _ _ _ _ _ _ add0 addc0 < <(stats "$workdir/samples/$d.$t.startup" "$ev0")
		fi
		nu=$(net "$add" "$add0" "$ev" "$ev0")
		nc=$(net "$addc" "$addc0" "$ev" "$ev0")
		us_event[$d:$t]=$nu
		ratio[$d:$t]=$mr
		echo "| $(tool_label "$t") | $(tool_build "$t") | $n | $ev | $mu | $mt | **$mr** | $rmin–$rmax | $spread | $mp | $(awk -v a="$add0" 'BEGIN { if (a == "") print "–"; else printf "%.0f", a / 1000 }') | **$nu** | $nc | ${okcol//_/ } |"
	done
done

echo
echo "## Summary: slowdown (net µs/event) by depth"
echo
printf '| tool | build |'
for d in $depths; do printf ' ~%s |' "$d"; done
echo
printf '|---|---|'
for d in $depths; do printf -- '---:|'; done
echo
for t in $active; do
	printf '| %s | %s |' "$(tool_label "$t")" "$(tool_build "$t")"
	for d in $depths; do
		if [ -n "${ratio[$d:$t]:-}" ]; then
			printf ' %s (%s) |' "${ratio[$d:$t]}" "${us_event[$d:$t]}"
		else
			printf ' failed |'
		fi
	done
	echo
done

case " $active " in
*" strace-k "*" dwarf "* | *" dwarf "*" strace-k "*)
	echo
	echo "## strace -k ÷ memtap --unwind=dwarf, net µs per event"
	echo
	echo "| depth | strace -k µs/event | memtap dwarf µs/event | ratio |"
	echo "|---:|---:|---:|---:|"
	for d in $depths; do
		s=${us_event[$d:strace-k]:-}
		m=${us_event[$d:dwarf]:-}
		r=$(awk -v s="$s" -v m="$m" 'BEGIN { if (s != "" && s != "–" && m != "" && m != "–" && m > 0) printf "**%.0f×**", s / m; else print "–" }')
		echo "| ~$d | ${s:-–} | ${m:-–} | $r |"
	done
	;;
esac

echo
echo "## Stacks: count-weighted folded output, $check_rounds rounds"
echo
echo "\`memtap --unwind=METHOD --weight=count -F folded -o FILE -- deepmap D $check_rounds\`: calls"
echo "of each kind whose stack holds the whole chain main;dm_00;…;deep_leaf, out of the"
echo "calls the loop makes; frames = frames of that mmap stack, root = its outermost"
echo "frame.  The frame-pointer walk on the build without frame pointers is expected to fail."
echo
echo "| depth | unwinder | build | mmap | munmap | mremap | frames | root | ok |"
echo "|---:|---|---|---:|---:|---:|---:|---|:---:|"
for d in $depths; do
	for u in fp dwarf libunwind; do
		for b in nofp fp; do
			v=${correct[$d:$u:$b]}
			if [ "$v" = failed ]; then
				echo "| ~$d | $u | $b | | | | | | ✗ memtap failed |"
				continue
			fi
			read -r cm cu cr fr root <<<"$v"
			okc=$(awk -v a="$cm" -v b="$cu" -v c="$cr" 'BEGIN {
				split(a, x, "/"); split(b, y, "/"); split(c, z, "/")
				print (x[1] == x[2] && y[1] == y[2] && z[1] == z[2]) ? "✓" : "✗" }')
			[ "$okc" = ✓ ] || [ "$u:$b" != fp:nofp ] || okc="✗ (expected)"
			echo "| ~$d | $u | $b | $cm | $cu | $cr | $fr | $root | $okc |"
		done
	done
done

# --- breakpoint cost (bench/bp-cost.sh), once memtap probes allocators --

echo
echo "## Allocator probes (bench/bp-cost.sh)"
echo
builddir=$(cd "$(dirname "$memtap")" && pwd)
if [ "$bpcost" = no ]; then
	echo "Not run (--bp-cost=no)."
elif [ ! -f "$here/bp-cost.sh" ]; then
	echo "Skipped: bench/bp-cost.sh is not there."
elif ! "$memtap" --help 2>&1 | grep -q -e '-e.*alloc' -e 'alloc.*events'; then
	echo "Skipped: this memtap has no \`-e alloc\` yet (\`memtap --help\` lists only syscall events)."
elif [ ! -x "$builddir/tests/unit/bp-harness" ] || [ ! -x "$builddir/tests/targets/alloc-loop" ]; then
	echo "Skipped: run \`make check TESTS=\` in $builddir first (bp-cost.sh needs its test programs)."
else
	log "running bp-cost.sh"
	echo '```'
	sh "$here/bp-cost.sh" "$builddir" 3 || echo "bp-cost.sh failed: exit status $?"
	echo '```'
fi
