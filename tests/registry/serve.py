#!/usr/bin/env python3
"""The test npm registry: serves what build.sh wrote in DIR.

  serve.py --dir DIR --port PORT --base URL [--host ADDR] [--log FILE]

GET /<name> and /@scope%2fname (or /@scope/name): the packument, its
tarball URLs made from --base; GET /<name>/-/<file>.tgz: the tarball.
Anything else is 404 (npm's audit and the like).  Each request is one line
of the log: "METHOD PATH STATUS", flushed at once, so a test can tell what
was fetched while it watched.  Paths are checked against the layout, never
joined raw: nothing outside DIR is served."""
import argparse
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

NAME = r"(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~][a-z0-9._~-]*"
PACKUMENT = re.compile(r"^/(%s)/?$" % NAME, re.I)
TARBALL = re.compile(r"^/(%s)/-/([A-Za-z0-9._~-]+\.tgz)$" % NAME, re.I)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "test-registry"

    def log_message(self, fmt, *args):
        pass

    def note(self, status):
        lock, log = self.server.log_lock, self.server.log
        if log is None:
            return
        with lock:
            log.write("%s %s %d\n" % (self.command, self.path, status))
            log.flush()

    def answer(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.note(status)

    def missing(self):
        self.answer(404, b'{"error":"Not found"}', "application/json")

    def do_GET(self):
        path = unquote(urlsplit(self.path).path)
        if ".." in path or "\\" in path or "\0" in path:
            return self.missing()
        top = self.server.top
        m = TARBALL.match(path)
        if m:
            f = os.path.join(top, "tarballs", m[1], "-", m[2])
            if not os.path.isfile(f):
                return self.missing()
            with open(f, "rb") as fh:
                return self.answer(200, fh.read(), "application/octet-stream")
        m = PACKUMENT.match(path)
        if m:
            f = os.path.join(top, "packuments", m[1] + ".json")
            if not os.path.isfile(f):
                return self.missing()
            with open(f) as fh:
                doc = json.load(fh)
            for v in doc["versions"].values():
                v["dist"]["tarball"] = self.server.base + v["dist"]["tarball"]
            body = json.dumps(doc, separators=(",", ":")).encode()
            return self.answer(200, body, "application/json")
        self.missing()

    do_HEAD = do_GET

    def do_POST(self):
        # npm's audit and friends: not served here.
        n = int(self.headers.get("Content-Length") or 0)
        if 0 < n <= 1 << 20:
            self.rfile.read(n)
        self.missing()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--base", required=True, help="the URL clients reach, e.g. http://10.0.0.2:4873/")
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--log")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.dir, "packuments")):
        sys.exit("serve.py: %s has no packuments (run tests/registry/build.sh)" % a.dir)
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    srv.top = os.path.abspath(a.dir)
    srv.base = a.base.rstrip("/")
    srv.log = open(a.log, "a") if a.log else None
    srv.log_lock = threading.Lock()
    srv.serve_forever()


main()
