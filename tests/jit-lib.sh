# tests/jit-lib.sh - sourced by the tests of runtimes that name their
# run-time code for perf (tests/jit-*.test), after tests/lib.sh.

# jit_sum FOLDED REGEX [REGEX2]: bytes of the folded lines (of one
# event) that match REGEX and REGEX2 (awk regular expressions; from the
# environment, not -v, whose escapes gawk would take for its own)
jit_sum() {
	JIT_RE=$2 JIT_RE2=${3:-.} awk '$0 ~ ENVIRON["JIT_RE"] && $0 ~ ENVIRON["JIT_RE2"] { s += $NF }
	END { print s + 0 }' "$1"
}

# jit_pid OUT...: the pid of the process memtap's report names
jit_pid() {
	sed -n 's/^process \([0-9]*\) .*/\1/p' "$@" | head -1
}

# jit_python VERSION: the python of that version, or nothing
jit_python() {
	# pyenv's shims answer command -v for versions they do not run
	for p in "$HOME"/.pyenv/versions/"$1".*/bin/python"$1" "$(command -v "python$1" 2>/dev/null)"; do
		[ -x "$p" ] && "$p" -c pass 2>/dev/null && { echo "$p"; return; }
	done
}

# jit_cleanup PID: the perf map and jitdump a runtime left in /tmp
jit_cleanup() {
	rm -f "/tmp/perf-$1.map" "/tmp/jit-$1.dump"
}
