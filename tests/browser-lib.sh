# tests/browser-lib.sh - sourced by the browser tests (out-svg-browser,
# html-timeline-browser): Debian's chromium and node found (a skip, 77,
# without them), and the npm package playwright-core installed into
# $top_builddir/tests/out-node on the first run (never committed), one
# install at a time (flock: make check runs the tests side by side).
# Sets chromium and modules (an absolute path).
PLAYWRIGHT_VERSION=1.65.1

chromium=${CHROMIUM:-}
if [ -z "$chromium" ]; then
	for c in /usr/bin/chromium /usr/bin/chromium-browser; do
		[ -x "$c" ] && { chromium=$c; break; }
	done
fi
[ -n "$chromium" ] || { echo "SKIP: chromium not found (apt-get install chromium)"; exit 77; }
command -v node > /dev/null 2>&1 || { echo "SKIP: node not found"; exit 77; }

modules=$top_builddir/tests/out-node
mkdir -p "$modules" || exit 99
(
	flock 9 || exit 99
	[ -f "$modules/node_modules/playwright-core/package.json" ] && exit 0
	command -v npm > /dev/null 2>&1 || fail "npm not found to install playwright-core"
	timeout 600 npm install --prefix "$modules" --no-audit --no-fund \
		--no-save --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" ||
		fail "npm install playwright-core@$PLAYWRIGHT_VERSION"
) 9> "$modules.lock" || exit $?
modules=$(cd "$modules" && pwd) || exit 99
