#!/usr/bin/env python3
"""pyroscope-recv.py - a local receiver speaking Grafana Pyroscope's
/ingest contract, for memtap's push tests (only on 127.0.0.1).

    pyroscope-recv.py --dir DIR [--script S] [--down-until FILE] [--prefix P]
                      [--ipv6] [--auth USER:PASS] [--tenant ID]
    pyroscope-recv.py --dump FILE.pb.gz

It checks each request: POST, path /ingest (after an optional prefix
given by --prefix), the query (name=APP{k=v,...} with from <= until
integers, format=pprof, spyName), Content-Type application/octet-stream,
a gzipped pprof body whose sample types are exactly inuse_space/bytes
and alloc_space/bytes; with --auth, Basic authentication with those
credentials (none without); with --tenant, that X-Scope-OrgID (none
without).  --ipv6 listens on ::1.  A request that breaks the contract is answered
422 and written to DIR/errors.  Otherwise it answers the next status of
the script (a comma-separated list: 200, 400, 401, 503, or 429:SECONDS
for a 429 with Retry-After; 200 once the list is used up), and writes
one line per request to DIR/log:

    N STATUS TIME NAME LABELS FROM UNTIL

(TIME: seconds since the receiver started, LABELS k=v;k=v), and the body
of each 2xx request to DIR/N.pb.gz.  Its port goes to DIR/port once it
is bound; with --down-until FILE it does not listen (connections are
refused) until FILE exists.  --dump prints a decoded profile: its types,
period type, and one line per sample "INUSE ALLOC DEPTH LEAF ROOT".
"""
import argparse
import base64
import gzip
import http.server
import os
import socket
import sys
import time
import urllib.parse


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                raise ValueError("truncated field %d" % f)
            i += n
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def packed(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def decode(raw):
    """A pprof Profile as a dict; raises ValueError when malformed."""
    p = {"types": [], "samples": [], "locations": {}, "functions": {},
         "strings": [], "period_type": None}
    for f, wt, v in fields(raw):
        if f == 1:
            vt = {g: x for g, _, x in fields(v)}
            p["types"].append((vt.get(1, 0), vt.get(2, 0)))
        elif f == 2:
            s = {"locs": [], "values": [], "labels": 0}
            for g, w, x in fields(v):
                if g == 1:
                    s["locs"] += packed(w, x)
                elif g == 2:
                    s["values"] += [signed(y) for y in packed(w, x)]
                elif g == 3:
                    s["labels"] += 1
            p["samples"].append(s)
        elif f == 4:
            loc = {"id": 0, "funcs": []}
            for g, _, x in fields(v):
                if g == 1:
                    loc["id"] = x
                elif g == 4:
                    line = {h: y for h, _, y in fields(x)}
                    loc["funcs"].append(line.get(1, 0))
            p["locations"][loc["id"]] = loc
        elif f == 5:
            fn = {g: x for g, _, x in fields(v)}
            p["functions"][fn.get(1, 0)] = fn.get(2, 0)
        elif f == 6:
            p["strings"].append(v.decode("utf-8"))
        elif f == 11:
            vt = {g: x for g, _, x in fields(v)}
            p["period_type"] = (vt.get(1, 0), vt.get(2, 0))
    st = p["strings"]
    if not st or st[0] != "":
        raise ValueError("string table does not start with \"\"")

    def s(i):
        if i >= len(st):
            raise ValueError("string index %d out of the table" % i)
        return st[i]
    p["types"] = ["%s/%s" % (s(a), s(b)) for a, b in p["types"]]
    if p["period_type"]:
        p["period_type"] = "%s/%s" % tuple(s(x) for x in p["period_type"])
    for smp in p["samples"]:
        if len(smp["values"]) != len(p["types"]):
            raise ValueError("a sample with %d values for %d types" %
                             (len(smp["values"]), len(p["types"])))
        names = []
        for lid in smp["locs"]:
            loc = p["locations"].get(lid)
            if loc is None:
                raise ValueError("location %d not in the profile" % lid)
            fid = loc["funcs"][-1] if loc["funcs"] else 0
            names.append(s(p["functions"][fid]) if fid in p["functions"] else "?")
        smp["names"] = names
    return p


def check_body(body):
    try:
        raw = gzip.decompress(body)
    except Exception as e:
        return "body is not gzip: %s" % e
    try:
        p = decode(raw)
    except Exception as e:
        return "body is not a valid pprof: %s" % e
    if p["types"] != ["inuse_space/bytes", "alloc_space/bytes"]:
        return "sample types %s" % p["types"]
    return None


def parse_name(name):
    """APP{k=v,...} -> (APP, {k: v}); raises ValueError."""
    if "{" not in name or not name.endswith("}"):
        raise ValueError("name %r is not APP{labels}" % name)
    app, rest = name.split("{", 1)
    if not app:
        raise ValueError("empty app name")
    labels = {}
    for kv in filter(None, rest[:-1].split(",")):
        k, sep, v = kv.partition("=")
        if not sep or not k or any(c in v for c in "{}=,"):
            raise ValueError("bad label %r" % kv)
        if not all(c.isalnum() or c == "_" for c in k):
            raise ValueError("bad label name %r" % k)
        labels[k] = v
    return app, labels


class State:
    n = 0
    start = time.monotonic()


def make_handler(args):
    script = [x for x in (args.script or "").split(",") if x]

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, text, headers=()):
            body = (text + "\n").encode()
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def bad(self, why):
            with open(os.path.join(args.dir, "errors"), "a") as f:
                f.write("%s %s: %s\n" % (self.command, self.path, why))
            self.answer(422, "pyroscope-recv: " + why)

        def do_GET(self):
            self.bad("method GET")

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "-1"))
            if n < 0:
                return self.bad("no Content-Length")
            body = self.rfile.read(n)
            u = urllib.parse.urlsplit(self.path)
            if u.path != args.prefix + "/ingest":
                return self.bad("path %s" % u.path)
            try:
                q = urllib.parse.parse_qs(u.query, keep_blank_values=True, strict_parsing=True)
            except ValueError as e:
                return self.bad("query: %s" % e)
            if any(len(v) != 1 for v in q.values()):
                return self.bad("a repeated query parameter")
            q = {k: v[0] for k, v in q.items()}
            if set(q) != {"name", "from", "until", "format", "spyName"}:
                return self.bad("query parameters %s" % sorted(q))
            try:
                app, labels = parse_name(q["name"])
                fr, un = int(q["from"]), int(q["until"])
            except ValueError as e:
                return self.bad(str(e))
            if fr > un:
                return self.bad("from %d > until %d" % (fr, un))
            if q["format"] != "pprof" or not q["spyName"]:
                return self.bad("format %r spyName %r" % (q["format"], q["spyName"]))
            if self.headers.get("Content-Type") != "application/octet-stream":
                return self.bad("Content-Type %s" % self.headers.get("Content-Type"))
            auth = self.headers.get("Authorization")
            want = ("Basic " + base64.b64encode(args.auth.encode()).decode()
                    if args.auth else None)
            if auth != want:
                return self.bad("Authorization %s, want %s" % (auth, want))
            if self.headers.get("X-Scope-OrgID") != args.tenant:
                return self.bad("X-Scope-OrgID %s" % self.headers.get("X-Scope-OrgID"))
            why = check_body(body)
            if why:
                return self.bad(why)
            State.n += 1
            step = script.pop(0) if script else "200"
            status, _, ra = step.partition(":")
            status = int(status)
            with open(os.path.join(args.dir, "log"), "a") as f:
                f.write("%d %d %.3f %s %s %d %d\n" % (
                    State.n, status, time.monotonic() - State.start, app,
                    ";".join("%s=%s" % kv for kv in sorted(labels.items())) or "-", fr, un))
            if 200 <= status < 300:
                with open(os.path.join(args.dir, "%d.pb.gz" % State.n), "wb") as f:
                    f.write(body)
            hdrs = [("Retry-After", ra)] if ra else []
            texts = {400: "invalid profile: scripted refusal", 401: "unauthorized",
                     429: "too many requests", 503: "unavailable"}
            self.answer(status, texts.get(status, "ok"), hdrs)

    return H


def dump(path):
    with open(path, "rb") as f:
        p = decode(gzip.decompress(f.read()))
    print("types", " ".join(p["types"]))
    print("period", p["period_type"])
    for s in p["samples"]:
        names = s["names"]
        line = "%s %d %s %s" % (" ".join(str(v) for v in s["values"]), len(names),
                                names[0] if names else "-", names[-1] if names else "-")
        print(line + (" labels=%d" % s["labels"] if s["labels"] else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir")
    ap.add_argument("--script")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--down-until")
    ap.add_argument("--ipv6", action="store_true")
    ap.add_argument("--auth", help="USER:PASS that Basic authentication must carry")
    ap.add_argument("--tenant", help="the X-Scope-OrgID that must come")
    ap.add_argument("--dump")
    args = ap.parse_args()
    if args.dump:
        return dump(args.dump)
    cls = http.server.HTTPServer
    if args.ipv6:
        class V6(http.server.HTTPServer):
            address_family = socket.AF_INET6
        cls = V6
    srv = cls(("::1" if args.ipv6 else "127.0.0.1", 0), make_handler(args),
              bind_and_activate=False)
    srv.allow_reuse_address = True
    srv.server_bind()
    tmp = os.path.join(args.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(args.dir, "port"))
    while args.down_until and not os.path.exists(args.down_until):
        time.sleep(0.05)
    srv.server_activate()
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
