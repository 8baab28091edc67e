#!/usr/bin/env python3
"""A scripted fake OAuth token endpoint, the Claude subscription sign-in's.

    python3 oauth.py --port N --log FILE [--bind ADDR] [--code CODE]
                     [--access-token TOKEN]...

Prints "listening on ADDR:PORT" once it accepts connections (--port 0: any
free port).  README.md describes it next to provider.py.

  POST .../oauth/token   JSON bodies, as the real endpoint takes them:
      {"grant_type":"authorization_code","code","state","client_id",
       "redirect_uri","code_verifier"}
      {"grant_type":"refresh_token","refresh_token","client_id"}
    answers {"token_type":"Bearer","access_token","refresh_token",
    "expires_in","scope":"user:inference"}, or 400 {"error":"invalid_grant",
    "error_description"} for a wrong code or an unknown refresh token.
  POST .../_script       merges a JSON object into the script (below) and
                         answers the whole script
  anything else          404

Access tokens come from --access-token in order (the provider is started
with the same list as --expect-key), then random ones.  Refresh tokens are
random.  The script, all keys optional:

  expires_in          expires_in of authorization_code answers (3600)
  refresh_expires_in  expires_in of refresh answers (3600)
  rotate              refresh answers carry a new refresh token (true);
                      false: none, the client keeps its old one
  code                "ok", or "error": the code grant is refused with a
                      400 invalid_grant whose description repeats the code
  refresh             "ok", "invalid_grant" (400) or "error" (500)

Every request is one JSON line in --log, written before the answer: time,
path, headers (names lower-cased), the parsed body, the status, and for a
grant what was issued.

Python 3.11, standard library only.
"""

import argparse
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

from common import Server, serve


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.tokens = list(args.access_token)
        self.refresh = set()  # refresh tokens issued and not rotated away
        self.script = {"expires_in": 3600, "refresh_expires_in": 3600,
                       "rotate": True, "code": "ok", "refresh": "ok"}
        self.log_f = open(args.log, "a", encoding="utf-8")

    def next_access(self):
        if self.tokens:
            return self.tokens.pop(0)
        return "sk-ant-oat01-fake-" + secrets.token_hex(16)

    def log(self, rec):
        self.log_f.write(json.dumps(rec, separators=(",", ":")) + "\n")
        self.log_f.flush()


def grant(st, body):
    """(status, answer, issued) for a token request; called under st.lock."""
    s = st.script
    gt = body.get("grant_type")
    if gt == "authorization_code":
        code = body.get("code")
        if s["code"] == "error" or (st.args.code and code != st.args.code):
            return 400, {"error": "invalid_grant",
                         "error_description": "Invalid authorization code %s" % code}, None
        for k in ("state", "client_id", "redirect_uri", "code_verifier"):
            if not isinstance(body.get(k), str) or not body.get(k):
                return 400, {"error": "invalid_request",
                             "error_description": "missing %s" % k}, None
        rt = "sk-ant-ort01-fake-" + secrets.token_hex(16)
        st.refresh.add(rt)
        out = {"token_type": "Bearer", "access_token": st.next_access(),
               "refresh_token": rt, "expires_in": s["expires_in"],
               "scope": "user:inference"}
        return 200, out, out
    if gt == "refresh_token":
        if s["refresh"] == "error":
            return 500, {"error": "server_error",
                         "error_description": "temporarily unavailable"}, None
        rt = body.get("refresh_token")
        if s["refresh"] == "invalid_grant" or rt not in st.refresh:
            return 400, {"error": "invalid_grant",
                         "error_description": "Refresh token not found or invalid"}, None
        out = {"token_type": "Bearer", "access_token": st.next_access(),
               "expires_in": s["refresh_expires_in"], "scope": "user:inference"}
        if s["rotate"]:
            st.refresh.discard(rt)
            out["refresh_token"] = "sk-ant-ort01-fake-" + secrets.token_hex(16)
            st.refresh.add(out["refresh_token"])
        return 200, out, out
    return 400, {"error": "unsupported_grant_type",
                 "error_description": "grant_type %r" % gt}, None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    st: State = None

    def log_message(self, fmt, *a):
        pass

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(404, {"error": "not_found"})

    def do_POST(self):
        st = self.st
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        rec = {"ts": round(time.time(), 3), "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items()}}
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        rec["body"] = body
        with st.lock:
            if path.endswith("/_script") and isinstance(body, dict):
                st.script.update(body)
                code, ans, issued = 200, dict(st.script), None
            elif path.endswith("/oauth/token") and isinstance(body, dict):
                code, ans, issued = grant(st, body)
            elif path.endswith("/oauth/token"):
                code, ans, issued = 400, {"error": "invalid_request",
                                          "error_description": "not a JSON object"}, None
            else:
                code, ans, issued = 404, {"error": "not_found"}, None
            rec["status"] = code
            if issued:
                rec["issued"] = issued
            st.log(rec)
        self.reply(code, ans)


def main():
    ap = argparse.ArgumentParser(description="Scripted fake OAuth token endpoint.")
    ap.add_argument("--port", type=int, required=True, help="port (0: any free one)")
    ap.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    ap.add_argument("--log", required=True, help="JSON-lines request log (appended)")
    ap.add_argument("--code", default=None, help="the only authorization code accepted")
    ap.add_argument("--access-token", action="append", default=[],
                    help="the next access token to issue (repeatable, in order)")
    args = ap.parse_args()
    st = State(args)
    srv = Server((args.bind, args.port), type("BoundHandler", (Handler,), {"st": st}))
    return serve(srv)


if __name__ == "__main__":
    sys.exit(main())
