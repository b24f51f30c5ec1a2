# tests/jit-lib.sh - sourced by the tests of runtimes that name their
# run-time code for perf (tests/jit-*.test), after tests/lib.sh.

# jit_sum FOLDED REGEX [REGEX2]: bytes of the folded lines (of one
# event) that match REGEX and REGEX2 (awk regular expressions)
jit_sum() {
	awk -v re="$2" -v re2="${3:-.}" '$0 ~ re && $0 ~ re2 { s += $NF }
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
