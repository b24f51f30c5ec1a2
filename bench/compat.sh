#!/bin/bash
# bench/compat.sh - what memtap's fallbacks for older kernels cost a
# command, each forced with MEMTAP_DISABLE on this kernel.
#
#   syscalls  PTRACE_SYSCALL (no PTRACE_O_EXITKILL, or no seccomp
#             filters) against the seccomp filter, on an I/O-bound
#             command (workloads/iowrite.c) and an mmap-bound one
#             (workloads/mmapper.c);
#   stacks    stack copies through /proc/PID/mem (no process_vm_readv)
#             and PTRACE_PEEKDATA alone, against process_vm_readv, on
#             workloads/deepmap.c with dwarf stacks.
#
# Each cell: the median over the repetitions of traced/untraced and of
# (traced - untraced) per event (a memory syscall; for iowrite, per
# syscall of any kind), untraced and traced runs alternating.
# Output: Markdown on stdout.  Progress goes to stderr.
#
#   -r N        repetitions [5]
#   -m MEMTAP   the memtap binary [../memtap beside bench/, or PATH]
#   -s F        scale the workloads' sizes by F [1]
set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
memtap=${MEMTAP:-}
workdir=
keep=no
reps=5
scale=1
while getopts r:m:s: o; do
	case $o in
	r) reps=$OPTARG ;;
	m) memtap=$OPTARG ;;
	s) scale=$OPTARG ;;
	*) echo "usage: $prog [-r REPS] [-m MEMTAP] [-s SCALE]" >&2; exit 64 ;;
	esac
done
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
find_memtap
make_workdir memtap-compat
for w in iowrite mmapper deepmap; do
	"${CC:-cc}" -O2 -fno-optimize-sibling-calls -o "$workdir/bin/$w" "$here/workloads/$w.c" ||
		die "cannot build $w"
done
sz() { awk -v n="$1" -v s="$scale" 'BEGIN { printf "%d", n * s }'; }
nio=$(sz 200000)
nmap=$(sz 5000)
ndeep=$(sz 2000)

timed() {
	local t0 t1 rc=0
	t0=${EPOCHREALTIME/[.,]/}
	"$@" > /dev/null 2>&1 < /dev/null || rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	echo $((10#$t1 - 10#$t0))
	return $rc
}

# cell LABEL EVENTS DISABLE MEMTAP-ARGS -- COMMAND...: one table row
cell() {
	local label=$1 events=$2 disable=$3 args=() rows=()
	shift 3
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	for ((r = 1; r <= reps; r++)); do
		local u t
		if ((r % 2)); then
			u=$(timed "$@")
			t=$(MEMTAP_DISABLE=$disable timed "$memtap" -q "${args[@]}" -o /dev/null -- "$@")
		else
			t=$(MEMTAP_DISABLE=$disable timed "$memtap" -q "${args[@]}" -o /dev/null -- "$@")
			u=$(timed "$@")
		fi
		rows+=("$u $t")
		log "$label: rep $r: untraced ${u} us, traced ${t} us"
	done
	printf '%s\n' "${rows[@]}" | awk -v label="$label" -v ev="$events" "$awk_median"'
		{ n++; ratio[n] = $2 / $1; per[n] = ($2 - $1) / ev }
		END { printf "| %s | %.2f | %.1f |\n", label, median(ratio, n), median(per, n) }'
}

echo "| case | traced / untraced | µs per event |"
echo "|---|---|---|"
cell "iowrite $nio writes, seccomp" "$nio" "" -e mmap -- "$workdir/bin/iowrite" "$nio"
cell "iowrite $nio writes, PTRACE_SYSCALL (exitkill off)" "$nio" exitkill -e mmap -- \
	"$workdir/bin/iowrite" "$nio"
ev=$((nmap * 2 + nmap / 16))
cell "mmapper $nmap rounds, seccomp" "$ev" "" --unwind=none -- "$workdir/bin/mmapper" "$nmap"
cell "mmapper $nmap rounds, PTRACE_SYSCALL" "$ev" exitkill --unwind=none -- \
	"$workdir/bin/mmapper" "$nmap"
ev=$((ndeep * 2 + ndeep / 16))
cell "deepmap 20 $ndeep, stacks by process_vm_readv" "$ev" "" --unwind=dwarf -- \
	"$workdir/bin/deepmap" 20 "$ndeep"
cell "deepmap 20 $ndeep, stacks by /proc/PID/mem" "$ev" process_vm_readv,process_vm_writev \
	--unwind=dwarf -- "$workdir/bin/deepmap" 20 "$ndeep"
cell "deepmap 20 $ndeep, stacks by PTRACE_PEEKDATA" "$ev" \
	process_vm_readv,process_vm_writev,proc_mem,proc_mem_write --unwind=dwarf -- \
	"$workdir/bin/deepmap" 20 "$ndeep"
