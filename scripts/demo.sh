#!/bin/sh
# scripts/demo.sh BUILD_DIR - run memtap on the demo workload: a text
# report with the heaviest stacks, and a flame graph of the memory
# growth (SVG, open it in a browser).
set -eu
build=$(cd "${1:-.}" && pwd)
"$build/memtap" -q --top 3 -o "$build/demo-report.txt" -- "$build/scripts/demo-workload"
"$build/memtap" -q -o "$build/demo-flamegraph.svg" --title "demo-workload: memory growth by stack" \
	-- "$build/scripts/demo-workload"
cat "$build/demo-report.txt"
echo
echo "demo: report: $build/demo-report.txt"
echo "demo: flame graph: $build/demo-flamegraph.svg"
