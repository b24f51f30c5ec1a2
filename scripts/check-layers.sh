#!/bin/sh
# scripts/check-layers.sh [TOP] - the structure of src/, checked.
#
# src/ has one folder per layer.  A file may include headers of its own
# layer and of the layers below it, never of a layer above: so the
# layers depend one way and `memtap report FILE` needs no tracer.  From
# the bottom up:
#
#   util linux report stack record probe trace agent cli
#
# Headers are included by their path under src/ ("record/sink.h"); the
# architecture's headers, found through -I, are named here: arch.h is
# linux's, bp_arch.h probe's.  Besides the includes, no file below cli
# may read the parsed options (opt.), no file may declare (extern) a
# global variable that a file of a higher layer defines (a lower layer
# would read it without an include: cli hands it down instead), only
# the loop's own files include trace/loop.h (the sources see the loop
# through trace/source.h and trace/tracer.h), and no file may grow
# beyond MAX_LINES lines.  Prints one line per violation;
# exits 1 if any.
# Lines of scripts/layers-known are problems known and being mended:
# they are tolerated, and must be taken out of that file once mended.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top/src" || { echo "check-layers: no $top/src" >&2; exit 2; }
MAX_LINES=${MAX_LINES:-800}
layers="util linux report stack record probe trace agent cli"
loop_files="trace/loop.c trace/stops.c trace/detach.c trace/launch.c"

rank() {
	n=0
	for l in $layers; do
		[ "$l" = "$1" ] && { echo $n; return; }
		n=$((n + 1))
	done
	echo -1
}

known=$top/scripts/layers-known
seen=$(mktemp) || exit 2
trap 'rm -f "$seen" "$seen.g"' EXIT
bad=0
say() {
	if [ -f "$known" ] && grep -qxF -- "$*" "$known"; then
		echo "$*" >> "$seen"
		return
	fi
	echo "$*"
	bad=$((bad + 1))
}

files=$(find . -name '*.[ch]' | sed 's|^\./||' | sort)
cfiles=$(find . -name '*.c' | sed 's|^\./||' | sort)
for f in $files; do
	layer=${f%%/*}
	r=$(rank "$layer")
	if [ "$r" -lt 0 ]; then
		say "$f: not in a layer folder ($layers)"
		continue
	fi
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		config.h) continue ;;
		arch.h) il=linux ;;
		bp_arch.h) il=probe ;;
		detour-abi.h) il=probe ;;
		*/*) il=${inc%%/*} ;;
		*) say "$f: includes \"$inc\" without its layer folder"; continue ;;
		esac
		if [ "$inc" = trace/loop.h ]; then
			case " $loop_files " in
			*" $f "*) ;;
			*) say "$f: includes \"$inc\", the loop's own ($loop_files)" ;;
			esac
		fi
		ir=$(rank "$il")
		if [ "$ir" -lt 0 ]; then
			say "$f: includes \"$inc\" of no layer"
		elif [ "$ir" -gt "$r" ]; then
			say "$f: $layer includes \"$inc\" of $il, a layer above it"
		fi
	done
	if [ "$layer" != cli ] && grep -q '\<opt\.[a-z_]' "$f"; then
		say "$f: $layer reads the options (opt.); cli hands each layer its part"
	fi
	n=$(wc -l < "$f")
	[ "$n" -le "$MAX_LINES" ] || say "$f: $n lines (more than $MAX_LINES): split it by concern"
done
# extern declarations of variables: FILE NAME, one a line
externs() {
	awk '
	function names(d,   n, i, a, m) {
		sub(/^[[:space:]]*extern[[:space:]]+/, "", d)
		gsub(/\/\*[^*]*\*\//, "", d)
		sub(/;.*/, "", d)
		if (match(d, /\(\*[[:space:]]*[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\)/)) {
			m = substr(d, RSTART + 2, RLENGTH - 3)
			gsub(/[[:space:]]/, "", m)
			print FILENAME, m
			return
		}
		if (d ~ /\(/)
			return		# a function
		gsub(/\[[^]]*\]/, "", d)
		n = split(d, a, ",")
		for (i = 1; i <= n; i++)
			if (match(a[i], /[A-Za-z_][A-Za-z0-9_]*[[:space:]]*$/)) {
				m = substr(a[i], RSTART, RLENGTH)
				gsub(/[[:space:]]/, "", m)
				print FILENAME, m
			}
	}
	/^[[:space:]]*extern[[:space:]]/ && !/extern[[:space:]]+"C"/ {
		d = $0
		while (d !~ /;/ && (getline l) > 0)
			d = d " " l
		names(d)
	}' "$@"
}
# shellcheck disable=SC2086
externs $files | sort -u |
while read -r f name; do
	layer=${f%%/*}
	pat="^[A-Za-z_][^;(=]*[^A-Za-z0-9_(](\\(\\*)?$name\\)?(\\[[^]]*\\])*[[:space:]]*(\\([^)]*\\))?[[:space:]]*(=|;)"
	# shellcheck disable=SC2013,SC2086
	for d in $(grep -lE "$pat" $cfiles); do
		grep -E "$pat" "$d" | grep -qvE '^(extern|static|typedef)[[:space:]]' || continue
		dl=${d%%/*}
		[ "$(rank "$dl")" -gt "$(rank "$layer")" ] &&
			echo "$f: $layer declares $name, a global of $dl ($d): hand it down instead"
	done
done > "$seen.g"
while IFS= read -r line; do
	say "$line"
done < "$seen.g"
rm -f "$seen.g"
if [ -f "$known" ]; then
	while IFS= read -r line; do
		case $line in '#'* | '') continue ;; esac
		grep -qxF -- "$line" "$seen" ||
			say "scripts/layers-known: mended, take it out: $line"
	done < "$known"
	n=$(wc -l < "$seen")
	[ "$n" -eq 0 ] || echo "check-layers: $n known problem(s) in scripts/layers-known"
fi
[ "$bad" -eq 0 ] || { echo "check-layers: $bad problem(s)"; exit 1; }
echo "check-layers: src/ is layered ($layers)"
