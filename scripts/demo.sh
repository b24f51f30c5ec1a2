#!/bin/sh
# scripts/demo.sh BUILD_DIR - run memtap on the demo workload and write
# its report next to the build.
set -eu
build=${1:-.}
out=$build/demo-report.txt
"$build/memtap" -o "$out" -- "$build/scripts/demo-workload"
cat "$out"
echo "demo: report written to $out"
