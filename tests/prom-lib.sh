# tests/prom-lib.sh - sourced after tests/lib.sh by the tests that run a
# real Prometheus (Debian's, /usr/bin/prometheus; PROMETHEUS for
# another) against an exporter on this machine, and ask it what it
# scraped.  Everything listens on 127.0.0.1 only, on free ports; the
# server and its storage are removed when the test exits.
#
#   prom_start HOST:PORT   start Prometheus scraping HOST:PORT/metrics
#                          every second (skip, 77, without prometheus
#                          or python3); sets PROM_URL
#   prom_query EXPR        print the JSON answer of /api/v1/query
#   prom_value EXPR        print the value of the first series of
#                          EXPR's answer, nothing when it has none
#   prom_wait_series EXPR [SECONDS]
#                          wait until EXPR has at least one series
#                          (60 s by default, then fail); print the
#                          JSON answer
#   free_port              print a TCP port free on 127.0.0.1 now

PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
PROM_PID=
PROM_URL=

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# _prom_get PATH: print the body of a GET of PROM_URL/PATH (exit 1 on
# an HTTP error or none)
_prom_get() {
	python3 - "$PROM_URL$1" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
        sys.stdout.write(r.read().decode())
except Exception as e:
    sys.stderr.write("%s: %s\n" % (sys.argv[1], e))
    sys.exit(1)
EOF
}

prom_stop() {
	[ -n "$PROM_PID" ] || return 0
	kill -TERM "$PROM_PID" 2>/dev/null
	_pi=0
	while kill -0 "$PROM_PID" 2>/dev/null && [ $_pi -lt 100 ]; do
		sleep 0.1
		_pi=$((_pi + 1))
	done
	kill -KILL "$PROM_PID" 2>/dev/null
	wait "$PROM_PID" 2>/dev/null
	PROM_PID=
	rm -rf "$WORK/prometheus"
}

prom_start() {
	[ -x "$PROMETHEUS" ] || skip "no prometheus at $PROMETHEUS (Debian: apt-get install prometheus)"
	command -v python3 > /dev/null || skip "no python3 to ask Prometheus"
	_pd=$WORK/prometheus
	mkdir -p "$_pd/data"
	cat > "$_pd/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: memtap
    metrics_path: /metrics
    static_configs:
      - targets: ['$1']
EOF
	# a port found free may be taken before Prometheus binds it: try again
	for _try in 1 2 3; do
		_pp=$(free_port) || framework_error "no free port"
		"$PROMETHEUS" --config.file="$_pd/prometheus.yml" --storage.tsdb.path="$_pd/data" \
			--web.listen-address="127.0.0.1:$_pp" > "$_pd/log" 2>&1 &
		PROM_PID=$!
		BGPIDS="$BGPIDS $PROM_PID"
		PROM_URL=http://127.0.0.1:$_pp
		_pi=0
		while kill -0 "$PROM_PID" 2>/dev/null; do
			_prom_get /-/ready > /dev/null 2>&1 && return 0
			_pi=$((_pi + 1))
			[ $_pi -gt 600 ] && fail "prometheus not ready after 60 s: $(tail -5 "$_pd/log")"
			sleep 0.1
		done
		grep -q 'address already in use' "$_pd/log" ||
			fail "prometheus exited: $(tail -5 "$_pd/log")"
	done
	fail "prometheus found no free port: $(tail -5 "$_pd/log")"
}

prom_query() {
	python3 - "$PROM_URL" "$1" <<'EOF'
import sys, urllib.parse, urllib.request
url = sys.argv[1] + "/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
try:
    with urllib.request.urlopen(url, timeout=10) as r:
        sys.stdout.write(r.read().decode() + "\n")
except Exception as e:
    sys.stderr.write("query %s: %s\n" % (sys.argv[2], e))
    sys.exit(1)
EOF
}

prom_value() {
	prom_query "$1" | python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
if r:
    print(r[0]["value"][1])'
}

prom_wait_series() {
	_pw=0
	while :; do
		_pr=$(prom_query "$1" 2> /dev/null) &&
			printf '%s' "$_pr" | python3 -c 'import json, sys
sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)' 2> /dev/null &&
			{ printf '%s\n' "$_pr"; return 0; }
		_pw=$((_pw + 1))
		[ $_pw -gt $((${2:-60} * 5)) ] &&
			fail "no series for $1 after ${2:-60} s: $_pr; up: $(prom_query up 2>&1)"
		sleep 0.2
	done
}

trap 'prom_stop; cleanup' EXIT
