#!/bin/bash
# bench/spike/run.sh - what the in-target probes of the detour spike cost
# a malloc/free loop, against memtap's int3 probes and heaptrack, in one
# run: untraced, memtap -e malloc,free, each stub variant, heaptrack.
#
#   bench/spike/run.sh [-r REPS] [-m MEMTAP] [-b BUILDDIR] [-s SCALE] [-c REGEX]
#
# -s multiplies every loop size; -c keeps the cells whose name matches
# the extended REGEX.
#
# Every repetition runs every cell once, in an order rotated by the
# repetition, with the untraced loop of the same size in the same
# repetition; a cell is the median over the repetitions.  The loop
# (spike-loop.c) measures itself (the tracer's start-up is outside).
# ns/iter is the loop's wall time per iteration scaled to one CPU:
# WALL * min(T, CPUs) / (T * N); CPU ns/iter is the loop's CPU time (all
# its threads, not the tracer's) / (T * N), which the other jobs of a
# loaded machine disturb less; an iteration is one malloc + one free.
# Markdown on stdout, progress on stderr.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=5
scale=1
memtap=${MEMTAP:-}
builddir=$top/build
only=

while getopts "r:m:b:s:c:h" o; do
	case $o in
	r) reps=$OPTARG ;;
	m) memtap=$OPTARG ;;
	b) builddir=$OPTARG ;;
	s) scale=$OPTARG ;;
	c) only=$OPTARG ;;
	*) sed -n '2,20p' "$0"; exit 64 ;;
	esac
done
[ -n "$memtap" ] || memtap=$builddir/memtap
[ -x "$memtap" ] || { echo "run.sh: no memtap at $memtap (-m PATH)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/build.sh" "$work" "$builddir"
loop=$work/spike-loop
spike=$work/detour-spike
ncpu=$(nproc)
n() { awk -v a="$1" -v s="$scale" 'BEGIN { printf "%d", a * s }'; }

# name | threads | iterations per thread | command before the loop
cells=()
for t in 1 4; do
	if [ "$t" = 1 ]; then big=$(n 1000000); mid=$(n 200000); small=$(n 20000); tiny=$(n 4000)
	else big=$(n 250000); mid=$(n 50000); small=$(n 5000); tiny=$(n 1000); fi
	keep="$spike --variant=keep --tid=tcb --overwrite --ring=64 --copy-mode=memcpy"
	drained="$spike --variant=keep --tid=tcb --copy-mode=memcpy --ring=4096 --poll-us=20"
	cells+=(
	"int3 memtap -e malloc,free --unwind=none|$t|$tiny|$memtap -q -e malloc,free --unwind=none -o /dev/null --"
	"int3 memtap -e malloc,free (dwarf, 8K stacks)|$t|$tiny|$memtap -q -e malloc,free --stack-size=8K -o /dev/null --"
	"(a) count, shared lock add|$t|$big|$spike --variant=count --"
	"(a) count, per-thread slot lock add|$t|$big|$spike --variant=slot --"
	"(a) count, per-thread slot plain add|$t|$big|$spike --variant=nolock --"
	"(b) count + filter >= 256 B|$t|$big|$spike --variant=filter --min-size=256 --"
	"(c) keep, no stack, tid gettid|$t|$mid|$spike --variant=keep --overwrite --ring=64 --copy=0 --"
	"(c) keep, no stack|$t|$big|$keep --copy=0 --"
	"(c) keep, 512 B memcpy|$t|$big|$keep --copy=512 --"
	"(c) keep, 4096 B memcpy|$t|$mid|$keep --copy=4096 --"
	"(c) keep, 8192 B memcpy|$t|$mid|$keep --copy=8192 --"
	"(c) keep, 512 B process_vm_readv|$t|$small|$keep --copy=512 --copy-mode=vmreadv --"
	"(c) keep, 8192 B process_vm_readv|$t|$small|$keep --copy=8192 --copy-mode=vmreadv --"
	"(c) keep 512 B, drained by process_vm_readv|$t|$mid|$drained --copy=512 --"
	"(c) keep 8192 B, drained by process_vm_readv|$t|$mid|$drained --copy=8192 --"
	"(c) keep 512 B, drained in place (shared memfd ring)|$t|$mid|$drained --shared --copy=512 --"
	"(c) keep 8192 B, drained in place (shared memfd ring)|$t|$mid|$drained --shared --copy=8192 --"
	"(c) keep 512 B, dead consumer (ring full)|$t|$big|$spike --variant=keep --tid=tcb --copy-mode=memcpy --ring=64 --no-drain --copy=512 --"
	"(d) sample 64 KiB mean, 8192 B memcpy|$t|$big|$spike --variant=sample --sample-mean=65536 --tid=tcb --copy-mode=memcpy --copy=8192 --"
	"(e) result + keep, 4096 B memcpy|$t|$mid|$keep --variant=result --copy=4096 --"
	)
	if command -v heaptrack >/dev/null; then
		cells+=("heaptrack|$t|$mid|heaptrack -o $work/ht.$t --")
	fi
done

# run CELL_CMD T N -> "ns_per_iter cpu_ns_per_iter spike_line"
run_one() {
	local cmd=$1 t=$2 n=$3 out err ns
	out=$work/out err=$work/err
	# shellcheck disable=SC2086
	$cmd "$loop" -t "$t" -n "$n" >"$out" 2>"$err" || true
	if ! grep -q '^OK$' "$out"; then
		echo "run.sh: FAILED: $cmd $loop -t $t -n $n" >&2
		cat "$err" >&2
		echo "NaN NaN -"
		return
	fi
	ns=$(awk -v t="$t" -v n="$n" -v c="$ncpu" '
		/^WALL_NS/ { w = $2 * (t < c ? t : c) / (t * n) }
		/^CPU_NS/ { u = $2 / (t * n) }
		END { printf "%.2f %.2f", w, u }' "$out")
	echo "$ns $(grep '^SPIKE' "$err" | tr ' ' ',' || echo -)"
}

if [ -n "$only" ]; then
	kept=()
	for c in "${cells[@]}"; do
		[[ ${c%%|*} =~ $only ]] && kept+=("$c")
	done
	cells=("${kept[@]}")
fi

declare -A base
results=$work/results
: >"$results"
for ((r = 0; r < reps; r++)); do
	echo "run.sh: repetition $((r + 1))/$reps" >&2
	base=()
	nc=${#cells[@]}
	for ((k = 0; k < nc; k++)); do
		i=$(((k + r * 7) % nc))
		IFS='|' read -r name t n cmd <<<"${cells[$i]}"
		if [ -z "${base[$t.$n]:-}" ]; then
			read -r ns cpu _ < <(run_one "" "$t" "$n")
			base[$t.$n]="$ns|$cpu"
			printf '%s|%s|%s|%s|%s|%s\n' untraced "$t" "$n" "$ns" - "$cpu" >>"$results"
		fi
		read -r ns cpu spk < <(run_one "$cmd" "$t" "$n")
		IFS='|' read -r bns bcpu <<<"${base[$t.$n]}"
		printf '%s|%s|%s|%s|%s|%s|%s|%s\n' "$name" "$t" "$n" "$ns" "$spk" \
			"$bns" "$bcpu" "$cpu" >>"$results"
	done
done

# medians: ns/iter, ratio to the untraced loop of the same size and
# repetition, overhead per iteration; SPIKE fields of the median run
awk -F'|' -v reps="$reps" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function field(s, k,   m) { if (match(s, "," k "=[^,]*")) { m = substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2); return m } return "" }
$1 == "untraced" { next }
{
	key = $2 SUBSEP $1
	if (!(key in seen)) { seen[key] = 1; order[++no] = key; nm[key] = $1; th[key] = $2; it[key] = $3 }
	c = ++cnt[key]; v[key, c] = $4; rat[key, c] = $4 / $6; ov[key, c] = $4 - $6; bs[key, c] = $6
	cv[key, c] = $8; cov[key, c] = $8 - $7; cb[key, c] = $7
	if ($5 != "-") {
		d = field($5, "drain_cpu_ns_per_rec"); if (d != "" && d > 0) { dr[key, ++ndr[key]] = d }
		kept[key] = field($5, "kept"); drop[key] = field($5, "dropped"); calls[key] = field($5, "calls")
		slow[key] = field($5, "copy_slow"); su[key] = field($5, "slots_used")
	}
}
END {
	print "| threads | cell | iterations | untraced ns/iter | ns/iter | ratio | overhead ns/iter | untraced CPU ns/iter | CPU ns/iter | CPU overhead ns/iter | drain CPU ns/record | kept / dropped (last run) |"
	print "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for (o = 1; o <= no; o++) {
		k = order[o]; n = cnt[k]
		for (i = 1; i <= n; i++) { a[i] = v[k, i] } m = median(a, n)
		for (i = 1; i <= n; i++) { a[i] = rat[k, i] } rr = median(a, n)
		for (i = 1; i <= n; i++) { a[i] = ov[k, i] } oo = median(a, n)
		for (i = 1; i <= n; i++) { a[i] = bs[k, i] } bb = median(a, n)
		for (i = 1; i <= n; i++) { a[i] = cv[k, i] } cm = median(a, n)
		for (i = 1; i <= n; i++) { a[i] = cov[k, i] } co = median(a, n)
		for (i = 1; i <= n; i++) { a[i] = cb[k, i] } cbb = median(a, n)
		dd = "-"; if (ndr[k]) { for (i = 1; i <= ndr[k]; i++) a[i] = dr[k, i]; dd = sprintf("%.0f", median(a, ndr[k])) }
		kd = (k in kept) && kept[k] != "" ? kept[k] " / " drop[k] : "-"
		printf "| %s | %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f | %s | %s |\n", th[k], nm[k], it[k], bb, m, rr, oo, cbb, cm, co, dd, kd
	}
	printf "\n%d repetitions; medians.\n", reps
}' "$results"
cp "$results" "${SPIKE_RESULTS:-/dev/null}" 2>/dev/null || true
