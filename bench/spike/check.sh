#!/bin/bash
# bench/spike/check.sh - the safety checks of the detour spike:
#   kill    SIGKILL the tracer while the detour is in and the ring is
#           full: the command finishes, correct, soon after
#   detach  restore the entries while 4 threads run: they finish, the
#           entry bytes are the original ones, the counters stop
#   fork    a fork child of a detoured process (vm ring, shared ring)
#           allocates and checks its memory: same output as untraced
#
#   bench/spike/check.sh [BUILDDIR]
# Prints one PASS/FAIL line per check; exit 1 if any failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${1:-$top/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/build.sh" "$work" "$builddir" || exit 1
cc -O2 -o "$work/alloc-fork" "$top/tests/targets/alloc-fork.c" || exit 1
spike=$work/detour-spike
loop=$work/spike-loop
fail=0

result() {	# NAME OK(0/1) DETAIL
	if [ "$2" = 0 ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; fail=1; fi
}

# kill: ring of 64 records, never drained; the tracer dies 1 s in
"$spike" --variant=keep --copy=512 --copy-mode=memcpy --tid=tcb --no-drain --ring=64 \
	-- "$loop" -t 4 -n 20000000 >"$work/kill.out" 2>"$work/kill.err" &
tracer=$!
sleep 1
target=$(sed -n 's/.*pid \([0-9]*\): stub.*/\1/p' "$work/kill.err")
if [ -z "$target" ] || ! kill -0 "$target" 2>/dev/null; then
	result kill 1 "the command was not running 1 s in (make it longer)"
else
	kill -9 "$tracer"
	t0=$(date +%s%N)
	while kill -0 "$target" 2>/dev/null; do sleep 0.05; done
	t1=$(date +%s%N)
	grep -q '^OK$' "$work/kill.out"
	result kill $? "the command went on for $(((t1 - t0) / 1000000)) ms after the SIGKILL and printed $(tail -1 "$work/kill.out")"
fi
wait "$tracer" 2>/dev/null

# detach after 0.5 s of a 4-thread loop
"$spike" --variant=keep --copy=512 --copy-mode=memcpy --tid=tcb --detach-after=0.5 \
	-- "$loop" -t 4 -n 30000000 >"$work/det.out" 2>"$work/det.err"
rc=$?
line=$(grep '^DETACH' "$work/det.err")
[ "$rc" = 0 ] && grep -q '^OK$' "$work/det.out" &&
	[ "$line" = "DETACH entries=original calls_after=0" ]
result detach $? "exit $rc, ${line:-no DETACH line}; $(grep restored "$work/det.err" | sed 's/^detour-spike: //')"

# fork: the child's output must be the untraced one
"$work/alloc-fork" >"$work/fork.ref" 2>&1
for mode in "" --shared; do
	"$spike" --variant=keep --copy=512 --copy-mode=memcpy --tid=tcb $mode \
		-- "$work/alloc-fork" >"$work/fork.out" 2>"$work/fork.err"
	rc=$?
	cmp -s "$work/fork.ref" "$work/fork.out"
	result "fork${mode:+ $mode}" $? "exit $rc, $(grep -o 'kept=[0-9]* ' "$work/fork.err")output $(cmp -s "$work/fork.ref" "$work/fork.out" && echo same || echo DIFFERENT)"
done
exit $fail
