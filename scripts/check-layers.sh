#!/bin/sh
# scripts/check-layers.sh [TOP] - the structure of src/, checked.
#
# src/ has one folder per layer.  A file may include headers of its own
# layer and of the layers below it, never of a layer above: so the
# layers depend one way and `memtap report FILE` needs no tracer.  From
# the bottom up:
#
#   util arch linux report stack record probe trace agent cli
#
# Headers are included by their path under src/ ("record/sink.h"); a
# bare name is a header of the CPU's folder, src/arch/$(arch)/, found
# through -I: it is arch's, and only arch/ includes one so (the others
# through "arch/arch.h" or "arch/stub-abi.h").  Besides the includes,
# no file below cli may read the parsed options (opt.), no file may
# declare (extern) a global variable that a file of a higher layer
# defines (a lower layer would read it without an include: cli hands it
# down instead), only the loop's own files include trace/loop.h (the
# sources see the loop through trace/source.h and trace/tracer.h), and
# no file may grow beyond MAX_LINES lines.
# Three rules keep a CPU's facts and the folders' shapes in hand:
#  - no x86-64 fact outside a CPU's folder of src/arch/ (ARCH_DIRS: the
#    headers of src/arch/ itself, arch.h, stub-abi.h..., are every
#    CPU's), nor a file in an
#    x86_64/ folder elsewhere: no x86 register name (rip rsp rbp rax
#    orig_rax rdi rsi rdx rbx rcx r8..r15 eflags fs_base
#    user_regs_struct), PTRACE_GETREGS/SETREGS/PEEKUSER/POKEUSER, Zydis
#    or ZYDIS_, AUDIT_ARCH_, EM_X86_64, UNW_X86_64_, PERF_REG_X86 or
#    perf.h's PERF_REG_AX..R15 (perf's x86 order), nor an include of an
#    x86_64/ path, in a .c, .h or .S file's code (its comments are not
#    read; its strings are): one line per file and kind of fact,
#    followed, when it is not a known one, by where;
#  - every folder has a README.md, its opening comment;
#  - no include circle of 3 or more units within a folder, by its
#    #include "..." lines (a unit is a .c and the .h of the same name;
#    a bare name is the folder's own file, else a CPU header found
#    through -I): pairs are allowed.
# Prints one line per violation; exits 1 if any.
# Lines of scripts/layers-known are problems known and being mended:
# they are tolerated, and must be taken out of that file once mended.
set -u
top=${1:-$(dirname "$0")/..}
# absolute, as the check runs in src/
if ! abs=$(cd "$top" 2>/dev/null && pwd) || ! cd "$abs/src"; then
	echo "check-layers: no $top/src" >&2
	exit 2
fi
top=$abs
MAX_LINES=${MAX_LINES:-800}
layers="util arch linux report stack record probe trace agent cli"
loop_files="trace/loop.c trace/stops.c trace/detach.c trace/launch.c"
# where x86-64 facts belong (a CPU's folders under src/, as shell patterns)
ARCH_DIRS="arch/*/*"

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
trap 'rm -f "$seen" "$seen.g" "$seen.a"' EXIT
bad=0
# say LINE: a violation, unless known; returns 1 when known
say() {
	if [ -f "$known" ] && grep -qxF -- "$*" "$known"; then
		echo "$*" >> "$seen"
		return 1
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
		*/*) il=${inc%%/*} ;;
		*)
			il=
			for h in arch/*/"$inc"; do
				[ -f "$h" ] && il=arch
			done
			if [ -z "$il" ]; then
				say "$f: includes \"$inc\" without its layer folder"
				continue
			fi
			[ "$layer" = arch ] ||
				say "$f: includes \"$inc\", a CPU's header: include \"arch/arch.h\" or \"arch/stub-abi.h\""
			;;
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
done
for f in $(find . -name '*.[chS]' | sed 's|^\./||' | sort); do
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

# x86-64 facts in code: FILE KIND LINE WORD, one a line
arch_facts() {
	awk '
	FNR == 1 { incom = 0 }
	{
		# the line without its comments (strings kept)
		s = $0; out = ""; q = ""; n = length(s); i = 1
		while (i <= n) {
			c = substr(s, i, 1); c2 = substr(s, i, 2)
			if (incom) {
				if (c2 == "*/") { incom = 0; i += 2; out = out " " }
				else i++
				continue
			}
			if (q != "") {
				if (c == "\\") { out = out substr(s, i, 2); i += 2; continue }
				if (c == q) q = ""
				out = out c; i++
				continue
			}
			if (c2 == "/*") { incom = 1; i += 2; continue }
			if (c2 == "//") break
			if (c == "\"" || c == "\047") q = c
			out = out c; i++
		}
		if (out ~ /^[ \t]*#[ \t]*include[ \t]*[<"][^>"]*x86_64\//)
			print FILENAME, "include", FNR, "x86_64/"
		n = split(out, w, /[^A-Za-z0-9_]+/)
		for (i = 1; i <= n; i++) {
			t = w[i]; k = ""
			if (t ~ /^(rip|rsp|rbp|rax|orig_rax|rdi|rsi|rdx|rbx|rcx|r8|r9|r1[0-5]|eflags|fs_base|user_regs_struct)$/)
				k = "reg"
			else if (t ~ /^PTRACE_(GETREGS|SETREGS|PEEKUSER|POKEUSER)$/)
				k = "ptrace"
			else if (t ~ /^(Zydis|ZYDIS_)/)
				k = "zydis"
			else if (t ~ /^AUDIT_ARCH_/)
				k = "audit"
			else if (t == "EM_X86_64")
				k = "elf"
			else if (t ~ /^UNW_X86_64_/)
				k = "unw"
			else if (t ~ /^PERF_REG_(X86_|(AX|BX|CX|DX|SI|DI|BP|SP|IP|FLAGS|CS|SS|DS|ES|FS|GS|R8|R9|R1[0-5])$)/)
				k = "perf"
			if (k != "")
				print FILENAME, k, FNR, t
		}
	}' "$@"
}
arch_what() {
	case $1 in
	reg) echo "x86 register names" ;;
	ptrace) echo "x86 ptrace requests (PTRACE_GETREGS, SETREGS, PEEKUSER, POKEUSER)" ;;
	zydis) echo "Zydis (x86 instructions)" ;;
	audit) echo "AUDIT_ARCH_ (a CPU's audit arch)" ;;
	elf) echo "EM_X86_64" ;;
	unw) echo "libunwind's x86 registers (UNW_X86_64_)" ;;
	perf) echo "perf's x86 registers (PERF_REG_)" ;;
	include) echo "an include of an x86_64/ path" ;;
	esac
}
afiles=
set -f		# ARCH_DIRS are patterns
for f in $(find . -name '*.[chS]' | sed 's|^\./||' | sort); do
	for d in $ARCH_DIRS; do
		# shellcheck disable=SC2254
		case $f in $d) continue 2 ;; esac
	done
	case $f in
	*/x86_64/*) say "$f: a CPU's file outside src/arch/" ;;
	esac
	afiles="$afiles $f"
done
set +f
# shellcheck disable=SC2086
[ -z "$afiles" ] || arch_facts $afiles > "$seen.a"
# shellcheck disable=SC2013
for fk in $(awk '{ print $1 "|" $2 }' "$seen.a" | sort -u); do
	f=${fk%|*}
	k=${fk#*|}
	case $f in
	arch/*) where="in a header of src/arch/ that every CPU shares" ;;
	*) where="outside src/arch/" ;;
	esac
	say "$f: $(arch_what "$k") $where" &&
		awk -v f="$f" -v k="$k" '$1 == f && $2 == k { print "  " $1 ":" $3 ": " $4 }' "$seen.a"
done
rm -f "$seen.a"

# include circles of 3 or more units in a folder
# shellcheck disable=SC2086
awk '
function unit(p) { sub(/\.[ch]$/, "", p); return p }
function dir(p) { if (sub(/\/[^\/]*$/, "", p)) return p; return "." }
BEGIN {
	for (i = 1; i < ARGC; i++)
		have[ARGV[i]] = 1
	for (i = 1; i < ARGC; i++) {
		p = ARGV[i]
		if (p ~ /^arch\/[^\/]+\/[^\/]+$/) {
			b = p; sub(/.*\//, "", b)
			cpu[b] = p
		}
	}
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0
	sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	d = dir(FILENAME)
	if (inc ~ /\//) t = inc
	else if ((d "/" inc) in have) t = d "/" inc
	else if (inc in cpu) t = cpu[inc]
	else next
	if (dir(t) != d) next
	u = unit(FILENAME); v = unit(t)
	if (u == v) next
	node[d, u] = 1; node[d, v] = 1
	edge[u, v] = 1
}
END {
	for (k in node) {
		split(k, a, SUBSEP)
		nn[a[1]]++; nm[a[1], nn[a[1]]] = a[2]
	}
	for (d in nn) {
		n = nn[d]
		# sorted, for stable lines
		for (i = 1; i <= n; i++) m[i] = nm[d, i]
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && m[j - 1] > m[j]; j--) {
				x = m[j]; m[j] = m[j - 1]; m[j - 1] = x
			}
		for (i = 1; i <= n; i++)
			for (j = 1; j <= n; j++)
				r[i, j] = ((m[i], m[j]) in edge)
		for (k = 1; k <= n; k++)
			for (i = 1; i <= n; i++)
				if (r[i, k])
					for (j = 1; j <= n; j++)
						if (r[k, j]) r[i, j] = 1
		for (i = 1; i <= n; i++) done[i] = 0
		for (i = 1; i <= n; i++) {
			if (done[i]) continue
			# the units reachable both ways: the strongly connected part of i
			c = 0; list = ""
			for (j = 1; j <= n; j++)
				if (j == i || (r[i, j] && r[j, i])) {
					c++; done[j] = 1; in_c[c] = j
					x = m[j]; sub(/.*\//, "", x)
					list = list " " x
				}
			if (c < 3) continue
			# a one-way arrow inside, or as many pairs as units, makes
			# a circle of 3 or more; a tree of pairs does not
			oneway = 0; pairs = 0
			for (a1 = 1; a1 <= c; a1++)
				for (b1 = 1; b1 <= c; b1++) {
					x = m[in_c[a1]]; y = m[in_c[b1]]
					if (!((x, y) in edge)) continue
					if ((y, x) in edge) pairs++
					else oneway = 1
				}
			if (oneway || pairs / 2 >= c)
				printf "%s/: an include circle of %d units:%s\n", d, c, list
		}
	}
}' $files | sort > "$seen.a"
while IFS= read -r line; do
	say "$line"
done < "$seen.a"
rm -f "$seen.a"
# every folder opens with a README.md that says what it owns
for d in $(find . -mindepth 1 -type d | sed 's|^\./||' | sort); do
	[ -f "$d/README.md" ] || say "$d/: no README.md saying what the folder owns"
done
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
