#!/usr/bin/env python3
"""A git smart-HTTP server for tests: `git http-backend` behind Python's
http.server, on loopback, with basic auth that requires a token.

    server.py --root DIR --port PORT [--token TOKEN] [--log FILE]
              [--tls-cert PEM --tls-key PEM]

Every repository under DIR is served (GIT_HTTP_EXPORT_ALL) and pushable
(http.receivepack=true).  With --token, a request without
`Authorization: Basic base64(<any user>:TOKEN)` gets 401.  Each request
is logged to --log as one line: method, path, the user name sent (or
"-" when no Authorization header came) and the answer's status; the
password is never logged.  With --tls-cert/--tls-key it speaks https with
that certificate.  Tests only.
"""
import argparse
import base64
import http.server
import os
import ssl
import subprocess
import sys
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "test-git-http/1"

    def log_message(self, fmt, *args):
        pass

    def note(self, user, status):
        if self.server.log:
            with open(self.server.log, "a") as f:
                f.write(f"{self.command} {self.path} user={user} {status}\n")

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def auth(self):
        """(user or "-", ok)."""
        h = self.headers.get("Authorization")
        if h is None:
            return "-", self.server.token is None
        if not h.startswith("Basic "):
            return "?", False
        try:
            user, _, pw = base64.b64decode(h[6:]).decode().partition(":")
        except ValueError:
            return "?", False
        return user, self.server.token is None or pw == self.server.token

    def handle_any(self):
        data = self.body()
        user, ok = self.auth()
        if not ok:
            self.note(user, 401)
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        url = urllib.parse.urlsplit(self.path)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_0": "http.receivepack",
            "GIT_CONFIG_VALUE_0": "true",
            "GIT_CONFIG_KEY_1": "safe.directory",
            "GIT_CONFIG_VALUE_1": "*",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": urllib.parse.unquote(url.path),
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(data)),
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_USER": user,
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        p = subprocess.run(["git", "http-backend"], input=data, env=env,
                           capture_output=True)
        head, _, rest = p.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.note(user, status)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = do_POST = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token")
    ap.add_argument("--log")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.root = os.path.abspath(a.root)
    srv.token = a.token
    srv.log = a.log
    print(f"listening on 127.0.0.1:{a.port}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
