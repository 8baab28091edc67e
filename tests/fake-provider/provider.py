#!/usr/bin/env python3
"""A scripted fake model provider for hermetic tests of the real agent CLIs.

    python3 provider.py --port N --log FILE [--bind ADDR] [--expect-key KEY]
                        [--chunk-delay-ms MS] [--dump-dir DIR] [--model ID]
                        [--dns-port 53 --dns-log FILE]

Prints "listening on ADDR:PORT" once it accepts connections (--port 0: any
free port, the line says which).  README.md has the directives and the
recipes that point the real Claude Code and OpenCode CLIs at it.

Speaks two wire protocols over HTTP/1.1 (keep-alive; streams are sent with
chunked transfer encoding, one HTTP chunk per event, flushed one by one):

  Anthropic Messages   POST .../v1/messages (stream or not),
                       POST .../v1/messages/count_tokens, GET .../v1/models
  OpenAI chat          POST .../v1/chat/completions (stream or not),
                       GET .../v1/models

Paths are matched by their ending, so a base URL with a prefix
(http://host:port/some/prefix/v1/...) works too.  GET /v1/models answers in
the Anthropic shape when the request carries an anthropic-version header,
else in the OpenAI shape.  HEAD/GET /api/hello (Claude Code's connectivity
check) gets 200 without a key.  Anything else: the protocol's 404.

What it answers is scripted by directives in the prompt, i.e. the text of
the last user message that is not a tool result:

  [[provider:write=PATH]]     first turn: a call of the client's file-writing
                              tool (picked from the tools the request offers)
                              writing PATH; once the conversation holds the
                              tool's result: the text "Done: wrote PATH".
                              May repeat (one tool call per PATH, same turn).
  [[provider:content=TEXT]]   what write writes (default "written through
                              the provider\\n"; "\\n" in TEXT is a newline)
  [[provider:status=CODE]]    answer the HTTP error CODE in the protocol's own
                              error shape: 400 401 402 403 404 429 500 503
                              529, or 429-quota (a 429 whose message speaks
                              of quota and credit)
  [[provider:status-times=N]] only the first N requests of that prompt get
                              the error, later ones the normal answer
  [[provider:sleep=SECONDS]]  wait that long before answering
  (none)                      the text "Hello from the fake provider"

A request that offers no write tool (a title or summary request, say) gets
a text answer even when the prompt asks for a write.

A relative PATH is resolved against the working directory the request's
system prompt names ("Working directory: /x", "cwd: /x"), else against
--default-cwd (/home/sandbox/workspace/app).

Every request is logged to --log as one JSON line, written before the answer
is sent: time, method, path, every header (names lower-cased), body size, the
protocol, model, stream flag, offered tool names, the directives seen and
what was answered.  --dump-dir DIR also saves each request body as
DIR/NNNN.json.

--expect-key KEY (may repeat): a request whose x-api-key (or Authorization: Bearer token)
is not KEY gets the protocol's 401.

--dns-port 53 --dns-log FILE: also a DNS server on --bind (UDP) that answers
every query NXDOMAIN and logs the name; a container started with
--dns <bind address> shows there every host it tried to reach.

Python 3.11, standard library only.
"""

import argparse
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler

from common import Server, serve

DEFAULT_CONTENT = "written through the provider\n"
HELLO = "Hello from the fake provider"
DIRECTIVE_RE = re.compile(r"\[\[provider:([a-z0-9-]+)(?:=(.*?))?\]\]", re.S)
CWD_RES = [
    re.compile(r"(?i)working directory:\s*(/[^\s<>\"']*)"),
    re.compile(r"\bcwd:\s*(/[^\s<>\"']*)"),
    re.compile(r"<cwd>\s*(/[^\s<>]*)\s*</cwd>"),
]
PATH_PROPS = ("file_path", "filePath", "path", "file", "filename")


class State:
    """Server-wide settings and the few counters the directives need."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.seq = 0
        self.error_counts = {}
        self.log_f = open(args.log, "a", encoding="utf-8") if args.log else None
        if args.dump_dir:
            os.makedirs(args.dump_dir, exist_ok=True)

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def count_error(self, key):
        with self.lock:
            n = self.error_counts.get(key, 0) + 1
            self.error_counts[key] = n
            return n

    def log(self, rec):
        if not self.log_f:
            return
        line = jdump(rec)
        with self.log_lock:
            self.log_f.write(line + "\n")
            self.log_f.flush()


# --- reading requests ---------------------------------------------------------


def text_of(content):
    """The text of a message's content: a string, or the text blocks of a
    list of blocks (both protocols)."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                out.append(str(b.get("text", "")))
    return "\n".join(out)


def is_tool_result_msg(api, m):
    if api == "openai":
        return m.get("role") == "tool"
    c = m.get("content")
    return isinstance(c, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c)


class Conversation:
    """What the scripted answer depends on, read from a request body."""

    def __init__(self, api, body):
        self.api = api
        msgs = body.get("messages") if isinstance(body, dict) else None
        msgs = msgs if isinstance(msgs, list) else []
        msgs = [m for m in msgs if isinstance(m, dict)]
        # The prompt: the last user message that is not a tool result.
        idx = -1
        for i, m in enumerate(msgs):
            if m.get("role") == "user" and not is_tool_result_msg(api, m):
                idx = i
        if idx >= 0:
            self.prompt = text_of(msgs[idx].get("content"))
        else:
            self.prompt = ""
        # Tool results after the prompt: the tool call was answered.
        self.tool_results = sum(1 for m in msgs[idx + 1:] if is_tool_result_msg(api, m))
        self.directives = [(k, v if v is not None else "")
                           for k, v in DIRECTIVE_RE.findall(self.prompt)]
        self.images = self._images(msgs)
        self.tools = self._tools(body)
        self.system_text = self._system_text(body, msgs)
        self.model = str(body.get("model", "")) if isinstance(body, dict) else ""
        self.stream = bool(body.get("stream")) if isinstance(body, dict) else False

    def _images(self, msgs):
        """The media types of the image parts of every message, in order:
        OpenAI's image_url (a data: URL) and Anthropic's image block."""
        out = []
        for m in msgs:
            c = m.get("content")
            for b in c if isinstance(c, list) else []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "image_url":
                    u = b.get("image_url")
                    u = u.get("url", "") if isinstance(u, dict) else str(u or "")
                    out.append(u[5:u.find(";")] if u.startswith("data:") and ";" in u else "url")
                elif b.get("type") == "image":
                    src = b.get("source") if isinstance(b.get("source"), dict) else {}
                    out.append(str(src.get("media_type", "unknown")))
        return out

    def _tools(self, body):
        tools = []
        raw = body.get("tools") if isinstance(body, dict) else None
        for t in raw if isinstance(raw, list) else []:
            if not isinstance(t, dict):
                continue
            if self.api == "openai":
                f = t.get("function") if isinstance(t.get("function"), dict) else {}
                name, schema = f.get("name"), f.get("parameters")
            else:
                name, schema = t.get("name"), t.get("input_schema")
            if isinstance(name, str):
                tools.append((name, schema if isinstance(schema, dict) else {}))
        return tools

    def _system_text(self, body, msgs):
        parts = []
        s = body.get("system") if isinstance(body, dict) else None
        if isinstance(s, str):
            parts.append(s)
        elif isinstance(s, list):
            parts.append(text_of(s))
        for m in msgs:
            if m.get("role") in ("system", "developer"):
                parts.append(text_of(m.get("content")))
        # Some clients put the environment into the first user message.
        for m in msgs[:2]:
            if m.get("role") == "user":
                parts.append(text_of(m.get("content")))
        return "\n".join(parts)

    def get(self, name, default=None):
        vals = [v for k, v in self.directives if k == name]
        return vals[-1] if vals else default

    def all(self, name):
        return [v for k, v in self.directives if k == name]

    def cwd(self, default):
        for rx in CWD_RES:
            m = rx.search(self.system_text)
            if m:
                return m.group(1).rstrip(".,;:")
        return default

    def write_tool(self):
        """(tool name, path property, content property) or None."""
        best = None
        for name, schema in self.tools:
            props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            pprop = next((p for p in PATH_PROPS if p in props), None)
            if pprop is None or "content" not in props:
                continue
            low = name.lower()
            if low == "write":
                score = 3
            elif low in ("write_file", "writefile", "file_write", "create_file"):
                score = 2
            elif "write" in low:
                score = 1
            else:
                continue
            if best is None or score > best[0]:
                best = (score, name, pprop)
        return None if best is None else (best[1], best[2], "content")


# --- the answers --------------------------------------------------------------

ANTHROPIC_ERRORS = {
    400: ("invalid_request_error", "The request is invalid (fake provider)."),
    401: ("authentication_error", "invalid x-api-key"),
    402: ("billing_error", "Your credit balance is too low to access the Anthropic API. "
          "Please go to Plans & Billing to upgrade or purchase credits."),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
}
ANTHROPIC_QUOTA = ("rate_limit_error", "You have exceeded your usage quota: your credit "
                   "balance is too low. Add credits or upgrade your plan.")

OPENAI_ERRORS = {
    400: ("The request is invalid (fake provider).", "invalid_request_error", None),
    401: ("Incorrect API key provided. You can find your API key at "
          "https://platform.openai.com/account/api-keys.", "invalid_request_error",
          "invalid_api_key"),
    402: ("Insufficient balance: your account has no credit left.", "insufficient_balance",
          "insufficient_balance"),
    403: ("You are not allowed to access this model.", "permission_denied",
          "model_not_allowed"),
    404: ("The model does not exist or you do not have access to it.",
          "invalid_request_error", "model_not_found"),
    429: ("Rate limit reached for requests. Please try again in 1s.", "requests",
          "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!",
          "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
    529: ("The engine is currently overloaded, please try again later.", "server_error", None),
}
OPENAI_QUOTA = ("You exceeded your current quota, please check your plan and billing "
                "details. Your credit balance is exhausted.", "insufficient_quota",
                "insufficient_quota")


def error_body(api, code, quota=False):
    if api == "anthropic":
        etype, msg = ANTHROPIC_QUOTA if quota else ANTHROPIC_ERRORS.get(
            code, ("api_error", "fake provider error %d" % code))
        return {"type": "error", "error": {"type": etype, "message": msg},
                "request_id": "req_fake" + uuid.uuid4().hex[:20]}
    msg, etype, ecode = OPENAI_QUOTA if quota else OPENAI_ERRORS.get(
        code, ("fake provider error %d" % code, "server_error", None))
    return {"error": {"message": msg, "type": etype, "param": None, "code": ecode}}


def split_text(s, n=12):
    """Splits s into pieces of about n characters at word boundaries."""
    out, cur = [], ""
    for w in re.split(r"(?<=\s)", s):
        cur += w
        if len(cur) >= n:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out or [""]


def split_fixed(s, n=16):
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def jdump(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def tokens_of(size):
    return max(1, size // 4)


class Cut(Exception):
    """Raised by sse() when a [[provider:cut=N]] stream has sent N deltas."""


def delta_bytes(obj):
    """The bytes of a streamed event's text, thinking and tool-input
    deltas as they are on the wire (JSON-escaped, quotes not counted)."""
    def wire(s):
        return len(jdump(s).encode()) - 2 if isinstance(s, str) else 0
    if obj.get("type") == "content_block_delta":
        d = obj.get("delta") or {}
        return sum(wire(d.get(k)) for k in ("text", "partial_json", "thinking")), True
    if obj.get("object") == "chat.completion.chunk" and obj.get("choices"):
        d = obj["choices"][0].get("delta") or {}
        n = wire(d.get("content"))
        for tc in d.get("tool_calls") or []:
            n += wire((tc.get("function") or {}).get("arguments"))
        return n, bool(d)
    return 0, False


# --- the handler ----------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-provider/1"
    st: State = None  # set on the subclass

    def version_string(self):
        return self.server_version

    def log_message(self, fmt, *a):  # quiet: the JSON log is the record
        pass

    # -- plumbing --

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            data = bytearray()
            while True:
                line = self.rfile.readline()
                if not line:
                    break
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return bytes(data)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def account_headers(self):
        """What real providers add to every answer: the account's
        organisation and project, a cookie, rate-limit counters."""
        for k, v in (("anthropic-organization-id", "org-fake-0123456789"),
                     ("openai-organization", "org-fake-0123456789"),
                     ("openai-project", "proj_fake0123456789"),
                     ("set-cookie", "__cf_bm=fake-cookie; path=/; HttpOnly"),
                     ("anthropic-ratelimit-requests-remaining", "999"),
                     ("x-ratelimit-remaining-requests", "999")):
            self.send_header(k, v)

    def send_json(self, code, obj, extra=None):
        data = jdump(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.account_headers()
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def start_stream(self, extra=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.account_headers()
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def chunk(self, text, delay=True):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
        ms = getattr(self, "delay_ms", None)
        if ms is None:
            ms = self.st.args.chunk_delay_ms
        if delay and ms > 0:
            time.sleep(ms / 1000.0)

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def sse(self, event, obj):
        n, is_delta = delta_bytes(obj)
        if is_delta and getattr(self, "cut_left", None) is not None:
            if self.cut_left <= 0:
                raise Cut()
            self.cut_left -= 1
            self.cut_bytes += n
        if event:
            self.chunk("event: %s\ndata: %s\n\n" % (event, jdump(obj)))
        else:
            self.chunk("data: %s\n\n" % jdump(obj))

    # -- dispatch --

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def do_OPTIONS(self):
        self.handle_any()

    def handle_any(self):
        st = self.st
        seq = st.next_seq()
        raw = self.read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = headers[k] + ", " + v if k in headers else v
        rec = {"seq": seq, "ts": round(time.time(), 3), "method": self.command,
               "path": self.path, "headers": headers, "body_size": len(raw)}
        if st.args.dump_dir:
            with open(os.path.join(st.args.dump_dir, "%04d.json" % seq), "wb") as f:
                f.write(raw)
        body = None
        if raw:
            data = raw
            enc = headers.get("content-encoding", "").lower()
            if enc in ("gzip", "deflate"):
                try:
                    data = zlib.decompress(raw, 47 if enc == "gzip" else 15)
                except zlib.error:
                    pass
            try:
                body = json.loads(data)
            except ValueError:
                body = None

        api = None
        kind = None
        if self.command == "POST" and path.endswith("/messages/count_tokens"):
            api, kind = "anthropic", "count_tokens"
        elif self.command == "POST" and path.endswith("/messages"):
            api, kind = "anthropic", "messages"
        elif self.command == "POST" and path.endswith("/chat/completions"):
            api, kind = "openai", "chat"
        elif self.command in ("GET", "HEAD") and path.endswith("/models"):
            api = "anthropic" if "anthropic-version" in headers else "openai"
            kind = "models"
        elif self.command in ("GET", "HEAD") and re.search(r"/models/[^/]+$", path):
            api = "anthropic" if "anthropic-version" in headers else "openai"
            kind = "model"
        elif self.command in ("GET", "HEAD") and path.endswith("/api/hello"):
            api, kind = "anthropic", "hello"
        else:
            api = "anthropic" if ("anthropic-version" in headers or "x-api-key" in headers) else "openai"
        rec["api"] = api
        rec["kind"] = kind

        self.cut_left = None
        self.cut_bytes = 0
        self.delay_ms = None
        try:
            self.answer(rec, api, kind, body, headers, raw)
        except Cut:
            # The stream ends in the middle: no last chunk, no usage.
            self.close_connection = True
            try:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            st.log({"seq": seq, "ts": round(time.time(), 3), "cut": True,
                    "delta_bytes": self.cut_bytes, "input_tokens": self.cut_input})
        except (BrokenPipeError, ConnectionResetError):
            pass

    def key_ok(self, headers):
        want = self.st.args.expect_key
        if not want:
            return True
        got = headers.get("x-api-key")
        if got is None:
            auth = headers.get("authorization", "")
            if auth.lower().startswith("bearer "):
                got = auth[7:].strip()
        return got in want

    def answer(self, rec, api, kind, body, headers, raw):
        st = self.st
        if kind == "hello":
            # Claude Code's connectivity check (HEAD /api/hello, sent without
            # a key unless non-essential traffic is disabled).
            rec.update(status=200, reply="hello")
            st.log(rec)
            return self.send_json(200, {"message": "hello"})

        if not self.key_ok(headers):
            rec.update(status=401, reply="error", reason="key")
            st.log(rec)
            return self.send_json(401, error_body(api, 401))

        if kind is None:
            rec.update(status=404, reply="not_found")
            st.log(rec)
            return self.send_json(404, error_body(api, 404))

        if kind == "models":
            rec.update(status=200, reply="models")
            st.log(rec)
            return self.send_json(200, self.models_body(api))
        if kind == "model":
            rec.update(status=200, reply="model")
            st.log(rec)
            mid = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            return self.send_json(200, self.model_obj(api, mid))

        if not isinstance(body, dict):
            rec.update(status=400, reply="error", reason="body is not a JSON object")
            st.log(rec)
            return self.send_json(400, error_body(api, 400))

        if kind == "count_tokens":
            rec.update(status=200, reply="count_tokens")
            st.log(rec)
            return self.send_json(200, {"input_tokens": tokens_of(len(raw))})

        conv = Conversation(api, body)
        rec.update(model=conv.model, stream=conv.stream,
                   tools=[n for n, _ in conv.tools],
                   directives=["%s=%s" % (k, v) if v else k for k, v in conv.directives],
                   tool_results=conv.tool_results, images=conv.images)

        sleep = conv.get("sleep")
        if sleep:
            try:
                time.sleep(float(sleep))
            except ValueError:
                pass

        status = conv.get("status")
        if status:
            quota = status.endswith("-quota")
            try:
                code = int(status.split("-")[0])
            except ValueError:
                code = 500
            times = conv.get("status-times")
            fire = True
            if times:
                key = hashlib.sha256(("%s\0%s" % (api, conv.prompt)).encode()).hexdigest()
                try:
                    fire = st.count_error(key) <= int(times)
                except ValueError:
                    fire = True
            if fire:
                rec.update(status=code, reply="error")
                st.log(rec)
                extra = {}
                if code in (429, 529, 503) and not quota:
                    extra["Retry-After"] = "1"
                if api == "anthropic":
                    extra["request-id"] = "req_fake" + uuid.uuid4().hex[:20]
                return self.send_json(code, error_body(api, code, quota), extra)

        # Text and tool calls of this turn.
        writes = conv.all("write")
        tool = conv.write_tool()
        calls = []
        if writes and tool and conv.tool_results == 0:
            content = conv.get("content")
            content = DEFAULT_CONTENT if content is None else content.replace("\\n", "\n")
            cwd = conv.cwd(st.args.default_cwd)
            for p in writes:
                full = p if p.startswith("/") else os.path.normpath(os.path.join(cwd, p))
                calls.append((tool[0], {tool[1]: full, tool[2]: content}))
            text = "I will write %s." % ", ".join(writes)
            reply = "tool_call"
        elif writes and conv.tool_results > 0:
            text = "Done: wrote %s" % ", ".join(writes)
            reply = "text"
        else:
            text = HELLO
            reply = "text"
        rec.update(status=200, reply=reply)
        if calls:
            rec["tool_calls"] = [{"name": n, "input": i} for n, i in calls]
        st.log(rec)

        model = conv.model or st.args.model
        in_tok = tokens_of(len(raw))
        out_tok = max(1, len(text) // 4 + 20 * len(calls))
        cache_w = cache_r = 0
        usage = conv.get("usage")
        if usage:
            try:
                nums = [int(x) for x in usage.split(",")] + [0, 0]
                in_tok, out_tok, cache_w, cache_r = nums[:4]
            except ValueError:
                pass
        if conv.get("text"):
            text = conv.get("text").replace("\\n", "\n")
        if conv.get("cut") is not None:
            try:
                self.cut_left = int(conv.get("cut"))
            except ValueError:
                self.cut_left = 0
        self.cut_input = in_tok
        if conv.get("delay-ms"):
            try:
                self.delay_ms = float(conv.get("delay-ms"))
            except ValueError:
                pass
        if api == "anthropic":
            self.anthropic_reply(conv.stream, model, text, calls, in_tok, out_tok,
                                 cache_w, cache_r)
        else:
            opts = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
            self.openai_reply(conv.stream, model, text, calls, in_tok, out_tok,
                              bool(opts.get("include_usage")), cache_r)

    def models_body(self, api):
        ids = [self.st.args.model] + [m for m in self.st.args.extra_model if m != self.st.args.model]
        objs = [self.model_obj(api, m) for m in ids]
        if api == "anthropic":
            return {"data": objs, "has_more": False, "first_id": ids[0], "last_id": ids[-1]}
        return {"object": "list", "data": objs}

    @staticmethod
    def model_obj(api, mid):
        if api == "anthropic":
            return {"type": "model", "id": mid, "display_name": mid,
                    "created_at": "2025-01-01T00:00:00Z"}
        return {"id": mid, "object": "model", "created": 1735689600, "owned_by": "fake-provider"}

    def anthropic_reply(self, stream, model, text, calls, in_tok, out_tok, cache_w=0, cache_r=0):
        mid = "msg_01" + uuid.uuid4().hex[:22]
        stop = "tool_use" if calls else "end_turn"
        usage = {"input_tokens": in_tok, "cache_creation_input_tokens": cache_w,
                 "cache_read_input_tokens": cache_r, "output_tokens": out_tok}
        blocks = [{"type": "text", "text": text}]
        for name, inp in calls:
            blocks.append({"type": "tool_use", "id": "toolu_01" + uuid.uuid4().hex[:22],
                           "name": name, "input": inp})
        rid = {"request-id": "req_fake" + uuid.uuid4().hex[:20]}
        if not stream:
            return self.send_json(200, {
                "id": mid, "type": "message", "role": "assistant", "model": model,
                "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": usage}, rid)
        self.start_stream(rid)
        start_usage = dict(usage, output_tokens=1)
        self.sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": start_usage}})
        self.sse("ping", {"type": "ping"})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}})
                for piece in split_text(b["text"]):
                    self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "text_delta", "text": piece}})
            else:
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "tool_use", "id": b["id"],
                                                                   "name": b["name"], "input": {}}})
                for piece in split_fixed(jdump(b["input"])):
                    self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "input_json_delta",
                                                               "partial_json": piece}})
            self.sse("content_block_stop", {"type": "content_block_stop", "index": i})
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": out_tok}})
        self.sse("message_stop", {"type": "message_stop"})
        self.end_stream()

    def openai_reply(self, stream, model, text, calls, in_tok, out_tok, include_usage, cache_r=0):
        cid = "chatcmpl-" + uuid.uuid4().hex[:24]
        created = int(time.time())
        finish = "tool_calls" if calls else "stop"
        # OpenAI counts cached input inside prompt_tokens.
        usage = {"prompt_tokens": in_tok + cache_r, "completion_tokens": out_tok,
                 "total_tokens": in_tok + cache_r + out_tok}
        if cache_r:
            usage["prompt_tokens_details"] = {"cached_tokens": cache_r}
        tcs = [{"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                "function": {"name": n, "arguments": jdump(i)}} for n, i in calls]
        if not stream:
            msg = {"role": "assistant", "content": text}
            if tcs:
                msg["tool_calls"] = tcs
            return self.send_json(200, {
                "id": cid, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": msg, "finish_reason": finish,
                             "logprobs": None}],
                "usage": usage})

        def chunk(delta, fin=None, **extra):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": model, "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": fin, "logprobs": None}]}
            obj.update(extra)
            self.sse(None, obj)

        self.start_stream()
        chunk({"role": "assistant", "content": ""})
        for piece in split_text(text):
            chunk({"content": piece})
        for k, tc in enumerate(tcs):
            chunk({"tool_calls": [{"index": k, "id": tc["id"], "type": "function",
                                   "function": {"name": tc["function"]["name"], "arguments": ""}}]})
            for piece in split_fixed(tc["function"]["arguments"]):
                chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
        chunk({}, finish)
        if include_usage:
            self.sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                            "model": model, "choices": [], "usage": usage})
        self.chunk("data: [DONE]\n\n", delay=False)
        self.end_stream()


DNS_TYPES = {1: "A", 5: "CNAME", 28: "AAAA", 33: "SRV", 65: "HTTPS", 16: "TXT", 12: "PTR"}


def dns_server(bind, port, log_path):
    """Answers every DNS query over UDP with NXDOMAIN and logs the name asked
    for: a sandbox started with --dns ADDR shows here every host it tried to
    reach."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((bind, port))
    f = open(log_path, "a", encoding="utf-8")

    def loop():
        while True:
            try:
                data, peer = sock.recvfrom(4096)
            except OSError:
                return
            if len(data) < 12:
                continue
            labels, i = [], 12
            try:
                while data[i] != 0:
                    n = data[i]
                    labels.append(data[i + 1:i + 1 + n].decode("ascii", "replace"))
                    i += 1 + n
                qtype = int.from_bytes(data[i + 1:i + 3], "big")
                question = data[12:i + 5]
            except IndexError:
                continue
            name = ".".join(labels)
            f.write(json.dumps({"ts": round(time.time(), 3), "dns": name,
                                "qtype": DNS_TYPES.get(qtype, qtype), "from": peer[0]}) + "\n")
            f.flush()
            # Response: same id, QR=1, RD copied, RA=1, RCODE=3 (NXDOMAIN).
            flags = 0x8000 | (int.from_bytes(data[2:4], "big") & 0x0100) | 0x0080 | 3
            resp = data[0:2] + flags.to_bytes(2, "big") + b"\x00\x01\x00\x00\x00\x00\x00\x00" + question
            try:
                sock.sendto(resp, peer)
            except OSError:
                pass

    threading.Thread(target=loop, daemon=True).start()
    return sock


def main():
    ap = argparse.ArgumentParser(description="Scripted fake model provider (Anthropic + OpenAI).")
    ap.add_argument("--port", type=int, required=True, help="port (0: any free one)")
    ap.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    ap.add_argument("--log", required=True, help="JSON-lines request log (appended)")
    ap.add_argument("--expect-key", action="append", default=[],
                    help="a key accepted (may repeat; none: any key)")
    ap.add_argument("--chunk-delay-ms", type=float, default=5.0,
                    help="pause after each stream chunk (default 5)")
    ap.add_argument("--dump-dir", default=None, help="save each request body here")
    ap.add_argument("--model", default="fake-model", help="model id in listings")
    ap.add_argument("--extra-model", action="append", default=[],
                    help="another model id in listings (repeatable)")
    ap.add_argument("--default-cwd", default="/home/sandbox/workspace/app",
                    help="resolves a relative write PATH when the request names no cwd")
    ap.add_argument("--dns-port", type=int, default=None,
                    help="also answer DNS over UDP on this port of --bind: NXDOMAIN to "
                         "everything, each name asked for logged to --dns-log")
    ap.add_argument("--dns-log", default=None, help="JSON-lines log of the DNS queries")
    args = ap.parse_args()
    if args.dns_port is not None and not args.dns_log:
        ap.error("--dns-port needs --dns-log")

    st = State(args)
    handler = type("BoundHandler", (Handler,), {"st": st})
    srv = Server((args.bind, args.port), handler)
    if args.dns_port is not None:
        try:
            dsock = dns_server(args.bind, args.dns_port, args.dns_log)
            print("dns on %s:%d" % dsock.getsockname()[:2], flush=True)
        except OSError as e:  # port 53 needs root, and one server per address
            print("dns unavailable: %s" % e, file=sys.stderr, flush=True)
    return serve(srv)


if __name__ == "__main__":
    sys.exit(main())
