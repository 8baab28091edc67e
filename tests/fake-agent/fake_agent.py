#!/usr/bin/env python3
"""A scripted stand-in for the coding agent CLIs (opencode, claude).

Tests cannot reach a model provider, so the test image puts this script
first in PATH under the real names.  It accepts exactly the command lines
the sandbox runs, prints the stream format of the CLI it impersonates
(one JSON object per line, flushed after each), and does what directives
in the prompt ask: [[fake:NAME]] or [[fake:NAME=VALUE]].  Without
directives it behaves like an agent asked to add a todo list.  See
README.md for the directives.

Python 3.11 standard library only; runs as any user with only $HOME, /tmp
and the working directory writable.
"""

import json
import os
import random
import re
import signal
import string
import subprocess
import sys
import time
import uuid

USAGE = {
    "opencode": "opencode run --format json --dangerously-skip-permissions "
    "[--model M] [--continue] PROMPT",
    "claude": "claude -p --output-format stream-json --verbose "
    "--dangerously-skip-permissions [--model M] [--continue] "
    "[--append-system-prompt SYS] PROMPT",
}

DIRECTIVE = re.compile(r"\[\[fake:([A-Za-z0-9_-]+)(?:=(.*?))?\]\]", re.S)
# Directives that replace the default todo-list work.
ACTIONS = {"write", "delete", "lines", "error", "silent", "oom"}

TOKENS = {"input": 1200, "output": 340, "reasoning": 0,
          "cache_read": 100, "cache_write": 0}
COST = 0.0123
CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
DEFAULT_CONTENT = "written by the fake agent\n"
CHILD_PID_FILE = "/tmp/fake-child.pid"
CHUNK = 16 << 20
ID_MARK, TEXT_MARK = "@@FAKE-ID@@", "@@FAKE-TEXT@@"


class Refused(Exception):
    pass


def parse_command_line(cli, args):
    """The real CLI's flags, strictly: anything else is refused."""
    if cli not in USAGE:
        raise Refused("unknown agent %r" % cli)
    if not args:
        raise Refused("no prompt")
    prompt, flags = args[-1], args[:-1]
    opts = {"model": None, "continue": False, "system": None}
    seen = set()
    if cli == "opencode":
        if not flags or flags[0] != "run":
            raise Refused("expected 'run'")
        flags = flags[1:]
        required = {"--format=json", "--dangerously-skip-permissions"}
    else:
        required = {"-p", "--output-format=stream-json", "--verbose",
                    "--dangerously-skip-permissions"}
    i = 0
    while i < len(flags):
        f = flags[i]
        with_value = {"--format", "--output-format", "--model"}
        if cli == "claude":
            with_value.add("--append-system-prompt")
        if f in with_value:
            if i + 1 >= len(flags):
                raise Refused("%s needs a value" % f)
            value = flags[i + 1]
            i += 2
            if f == "--model":
                opts["model"] = value
            elif f == "--append-system-prompt":
                opts["system"] = value
            else:
                seen.add("%s=%s" % (f, value))
            continue
        if f == "--print" and cli == "claude":
            f = "-p"
        if f == "--continue":
            opts["continue"] = True
        elif f in required:
            seen.add(f)
        else:
            raise Refused("unexpected argument %r" % f)
        i += 1
    missing = required - seen
    if missing:
        raise Refused("missing or wrong: %s" % ", ".join(sorted(missing)))
    return prompt, opts


def directives(prompt):
    found = {}
    for m in DIRECTIVE.finditer(prompt):
        found.setdefault(m.group(1), []).append(m.group(2))
    return found


def base62(n):
    alphabet = string.digits + string.ascii_letters
    return "".join(random.choice(alphabet) for _ in range(n))


class Stream:
    """What both CLIs share: line output and id generation."""

    def __init__(self, opts, garbage):
        self.garbage = garbage
        self.counter = 0

    def raw(self, text):
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(1)

    def line(self, obj):
        self.raw(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
        if self.garbage:
            self.counter += 1
            junk = ["", "npm WARN deprecated inflight@1.0.6",
                    self.TRUNCATED]
            self.raw(junk[self.counter % len(junk)])

    def shown(self, text):
        """A file's text as the CLI's read tool returns it."""
        rows = text.splitlines()[:2000]
        return self.SHOWN_HEAD + "\n".join(
            self.SHOWN_ROW % (i + 1, row) for i, row in enumerate(rows)) \
            + self.SHOWN_TAIL

    @staticmethod
    def now_ms():
        return time.time_ns() // 1_000_000


class OpenCode(Stream):
    """`opencode run --format json`: step_start, text, tool_use,
    step_finish and error lines around parts."""

    TRUNCATED = '{"type":"text","timestamp":1767036064268,"part":{"id":"prt_'
    SHOWN_HEAD, SHOWN_ROW, SHOWN_TAIL = "<file>\n", "%05d| %s", "\n</file>"

    def __init__(self, opts, garbage):
        super().__init__(opts, garbage)
        self.seq = 0
        self.session = session_id("opencode", opts["continue"],
                                  lambda: self.ident("ses"))
        self.message = self.ident("msg")

    def ident(self, prefix):
        self.seq += 1
        stamp = ((self.now_ms() << 12) + self.seq) & ((1 << 48) - 1)
        return "%s_%012x%s" % (prefix, stamp, base62(14))

    def event(self, type_, part=None, **extra):
        obj = {"type": type_, "timestamp": self.now_ms(),
               "sessionID": self.session}
        if part is not None:
            part = dict({"id": part.pop("id", None) or self.ident("prt"),
                         "sessionID": self.session,
                         "messageID": self.message}, **part)
            obj["part"] = part
        obj.update(extra)
        self.line(obj)

    def begin(self):
        self.event("step_start", {"type": "step-start",
                                  "snapshot": snapshot()})

    def text(self, text, part_id=None):
        t = self.now_ms()
        self.event("text", {"id": part_id, "type": "text", "text": text,
                            "time": {"start": t, "end": t}})

    def tool(self, name, path, extra_input=None, output="", error=None):
        key = {"glob": "pattern", "bash": "command"}.get(name, "filePath")
        state = {"status": "error" if error else "completed",
                 "input": dict({key: path}, **(extra_input or {}))}
        if error:
            state["error"] = error
        else:
            state["output"] = output
        t = self.now_ms()
        state.update({"title": os.path.basename(path) or path,
                      "metadata": {}, "time": {"start": t - 3, "end": t}})
        self.event("tool_use", {"type": "tool", "callID": base62(16),
                                "tool": name, "state": state})

    def finish(self, final):
        self.event("step_finish", {
            "type": "step-finish", "reason": "stop", "snapshot": snapshot(),
            "cost": COST,
            "tokens": {"input": TOKENS["input"], "output": TOKENS["output"],
                       "reasoning": TOKENS["reasoning"],
                       "cache": {"read": TOKENS["cache_read"],
                                 "write": TOKENS["cache_write"]}}})

    def error(self, message):
        self.event("error", error={"name": "APIError", "data": {
            "message": message, "statusCode": 500, "isRetryable": False}})

    def lines_template(self):
        """A text line with ID_MARK and TEXT_MARK to fill in, so a line
        can be written right after its timestamp is taken."""
        t = self.now_ms()
        return json.dumps({
            "type": "text", "timestamp": t, "sessionID": self.session,
            "part": {"id": ID_MARK, "sessionID": self.session,
                     "messageID": self.message, "type": "text",
                     "text": TEXT_MARK, "time": {"start": t, "end": t}}},
            separators=(",", ":"))


class Claude(Stream):
    """`claude -p --output-format stream-json --verbose`: system init,
    assistant and user turns, one result line."""

    TRUNCATED = '{"type":"assistant","message":{"content":[{"type":"te'
    SHOWN_HEAD, SHOWN_ROW, SHOWN_TAIL = "", "%6d\u2192%s", ""

    TOOL_NAMES = {"read": "Read", "write": "Write", "edit": "Edit",
                  "glob": "Glob", "bash": "Bash"}
    SNAKE = {"oldString": "old_string", "newString": "new_string"}

    def __init__(self, opts, garbage):
        super().__init__(opts, garbage)
        self.session = session_id("claude", opts["continue"],
                                  lambda: str(uuid.uuid4()))
        self.model = opts["model"] or CLAUDE_MODEL
        self.turns = 0
        self.started = time.monotonic()

    def envelope(self, obj):
        obj.update({"parent_tool_use_id": None, "session_id": self.session,
                    "uuid": str(uuid.uuid4())})
        return obj

    def begin(self):
        self.line({"type": "system", "subtype": "init", "cwd": os.getcwd(),
                   "session_id": self.session,
                   "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit",
                             "Write", "TodoWrite", "WebFetch"],
                   "mcp_servers": [], "model": self.model,
                   "permissionMode": "bypassPermissions",
                   "slash_commands": ["compact", "context", "cost", "init"],
                   "apiKeySource": "ANTHROPIC_API_KEY",
                   "claude_code_version": "2.0.28",
                   "output_style": "default", "agents": ["general-purpose"],
                   "uuid": str(uuid.uuid4())})

    def assistant(self, content, **extra):
        self.turns += 1
        msg = {"model": self.model, "id": "msg_01" + base62(22),
               "type": "message", "role": "assistant", "content": content,
               "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 4, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 100,
                         "output_tokens": 40, "service_tier": "standard"}}
        obj = self.envelope({"type": "assistant", "message": msg})
        obj.update(extra)
        self.line(obj)

    def text(self, text, part_id=None):
        self.assistant([{"type": "text", "text": text}])

    def tool(self, name, path, extra_input=None, output="", error=None):
        key = {"glob": "pattern", "bash": "command"}.get(name, "file_path")
        tool_id = "toolu_01" + base62(22)
        inp = {key: path}
        for k, v in (extra_input or {}).items():
            inp[self.SNAKE.get(k, k)] = v
        self.assistant([{"type": "tool_use", "id": tool_id,
                         "name": self.TOOL_NAMES[name], "input": inp}])
        block = {"tool_use_id": tool_id, "type": "tool_result",
                 "content": error or output}
        if error:
            block["is_error"] = True
        self.line(self.envelope({"type": "user", "message": {
            "role": "user", "content": [block]}}))

    def result(self, text, is_error=False):
        ms = int((time.monotonic() - self.started) * 1000)
        self.line({"type": "result", "subtype": "success",
                   "is_error": is_error, "duration_ms": ms,
                   "duration_api_ms": ms, "num_turns": self.turns,
                   "result": text, "session_id": self.session,
                   "total_cost_usd": COST,
                   "usage": {"input_tokens": TOKENS["input"],
                             "cache_creation_input_tokens":
                                 TOKENS["cache_write"],
                             "cache_read_input_tokens": TOKENS["cache_read"],
                             "output_tokens": TOKENS["output"],
                             "server_tool_use": {"web_search_requests": 0},
                             "service_tier": "standard"},
                   "modelUsage": {self.model: {
                       "inputTokens": TOKENS["input"],
                       "outputTokens": TOKENS["output"],
                       "cacheReadInputTokens": TOKENS["cache_read"],
                       "cacheCreationInputTokens": TOKENS["cache_write"],
                       "webSearchRequests": 0, "costUSD": COST,
                       "contextWindow": 200000}},
                   "permission_denials": [], "uuid": str(uuid.uuid4())})

    def finish(self, final):
        self.result(final if final is not None else "")

    def error(self, message):
        self.assistant([{"type": "text", "text": message}],
                       error="server_error")
        self.result(message, is_error=True)

    def lines_template(self):
        obj = self.envelope({"type": "assistant", "message": {
            "model": self.model, "id": ID_MARK, "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": TEXT_MARK}],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 8}}})
        return json.dumps(obj, separators=(",", ":"))


def snapshot():
    return "%040x" % random.getrandbits(160)


def session_id(cli, resume, new):
    """The session to continue, kept in $HOME like the real CLIs do."""
    path = os.path.join(os.path.expanduser("~"), ".cache", "fake-agent",
                        cli + "-session")
    if resume:
        try:
            with open(path) as f:
                sid = f.read().strip()
            if sid:
                return sid
        except OSError:
            pass
    sid = new()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(sid + "\n")
    except OSError:
        pass
    return sid


# The todo list the default run writes, in each flavour of app.
TODO_TSX = """\
import { useEffect, useState } from 'react'

const STORAGE_KEY = 'todos'

function loadTodos(): string[] {
  try {
    const saved: unknown = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]')
    return Array.isArray(saved)
      ? saved.filter((t): t is string => typeof t === 'string')
      : []
  } catch {
    return []
  }
}

export default function App() {
  const [todos, setTodos] = useState<string[]>(loadTodos)
  const [draft, setDraft] = useState('')

  useEffect(() => {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(todos))
  }, [todos])

  function add() {
    const text = draft.trim()
    if (!text) return
    setTodos([...todos, text])
    setDraft('')
  }

  return (
    <main>
      <h1>Todo list</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          add()
        }}
      >
        <input
          aria-label="New todo"
          placeholder="What needs doing?"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button type="submit">Add</button>
      </form>
      <ul>
        {todos.map((todo, i) => (
          <li key={i}>
            <span>{todo}</span>
            <button onClick={() => setTodos(todos.filter((_, j) => j !== i))}>
              Delete
            </button>
          </li>
        ))}
      </ul>
    </main>
  )
}
"""

TODO_JSX = (TODO_TSX
            .replace("function loadTodos(): string[] {", "function loadTodos() {")
            .replace("const saved: unknown = ", "const saved = ")
            .replace("(t): t is string => ", "(t) => ")
            .replace("useState<string[]>(", "useState("))

TODO_HTML = """\
<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Todo list</title>
  </head>
  <body>
    <main>
      <h1>Todo list</h1>
      <form id="add">
        <input id="draft" aria-label="New todo" placeholder="What needs doing?" />
        <button type="submit">Add</button>
      </form>
      <ul id="todos"></ul>
    </main>
    <script>
      const STORAGE_KEY = 'todos'
      let todos = []
      try {
        const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) || '[]')
        if (Array.isArray(saved)) todos = saved.filter((t) => typeof t === 'string')
      } catch (e) {}

      function render() {
        localStorage.setItem(STORAGE_KEY, JSON.stringify(todos))
        const list = document.getElementById('todos')
        list.replaceChildren()
        todos.forEach((todo, i) => {
          const li = document.createElement('li')
          const span = document.createElement('span')
          span.textContent = todo
          const del = document.createElement('button')
          del.textContent = 'Delete'
          del.onclick = () => {
            todos.splice(i, 1)
            render()
          }
          li.append(span, ' ', del)
          list.append(li)
        })
      }

      document.getElementById('add').onsubmit = (e) => {
        e.preventDefault()
        const draft = document.getElementById('draft')
        const text = draft.value.trim()
        if (!text) return
        todos.push(text)
        draft.value = ''
        render()
      }
      render()
    </script>
  </body>
</html>
"""

TODO_FASTAPI = '''

# Added by the agent: a todo list page (items kept in the browser).
from fastapi.responses import HTMLResponse  # noqa: E402

TODO_PAGE = """%s"""


@app.get("/todos", response_class=HTMLResponse)
def todo_list() -> str:
    return TODO_PAGE
''' % TODO_HTML.replace('"""', '\\"\\"\\"')


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def write_text(path, content):
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)


def add_todo_list(out):
    """The default run: what an agent asked for a todo list would do.
    Tools name files relative to the app directory, as the agents may
    (and as the tool events the tests look for do)."""
    for rel, content in (("src/App.tsx", TODO_TSX), ("src/App.jsx", TODO_JSX)):
        if os.path.isfile(rel):
            out.tool("read", rel, output=out.shown(read_text(rel)))
            write_text(rel, content)
            out.tool("write", rel, {"content": content})
            return rel
    if os.path.isfile("index.html"):
        out.tool("read", "index.html",
                 output=out.shown(read_text("index.html")))
        write_text("index.html", TODO_HTML)
        out.tool("write", "index.html", {"content": TODO_HTML})
        return "index.html"
    if os.path.isfile("main.py"):
        old = read_text("main.py")
        out.tool("read", "main.py", output=out.shown(old))
        write_text("main.py", old.rstrip("\n") + "\n" + TODO_FASTAPI)
        out.tool("edit", "main.py",
                 {"oldString": "", "newString": TODO_FASTAPI})
        return "main.py"
    out.tool("glob", "**/*", output="No files found")
    write_text("index.html", TODO_HTML)
    out.tool("write", "index.html", {"content": TODO_HTML})
    return "index.html"


def sleep_with_progress(out, seconds):
    deadline = time.monotonic() + seconds
    part = None
    k = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(1.0, left))
        k += 1
        if isinstance(out, OpenCode):
            part = part or out.ident("prt")
        out.text("working\u2026 %d" % k, part)


def spawn_child():
    child = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    with open(CHILD_PID_FILE, "w") as f:
        f.write("%d\n" % child.pid)


def stream_lines(out, n, interval_ms):
    head, tail = out.lines_template().split(TEXT_MARK)
    for k in range(1, n + 1):
        ident = out.ident("prt") if isinstance(out, OpenCode) \
            else "msg_01" + base62(22)
        head_k = head.replace(ID_MARK, ident)
        t = time.time_ns()
        out.raw("%sline %d t=%d%s" % (head_k, k, t, tail))
        if interval_ms > 0 and k < n:
            time.sleep(interval_ms / 1000.0)


def eat_memory(out):
    chunks = []
    while True:
        chunk = bytearray(CHUNK)
        for i in range(0, CHUNK, 4096):
            chunk[i] = 1
        chunks.append(chunk)
        if len(chunks) % 4 == 0:
            out.text("allocated %d MiB" % (len(chunks) * CHUNK >> 20))


def number(value, default, cast=float):
    try:
        return cast(value)
    except (TypeError, ValueError):
        return default


def run(cli, prompt, opts):
    d = directives(prompt)

    def first(name, default=None):
        return (d.get(name) or [default])[0]

    if "ignore-term" in d:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    cls = OpenCode if cli == "opencode" else Claude
    out = cls(opts, garbage="garbage" in d)
    if "garbage" in d:
        out.raw("Loading configuration\u2026")
        out.raw("")
    out.begin()

    if "error" in d:
        out.error("fake provider error")
        return 1
    if "silent" in d:
        out.finish(None)
        return 0
    if "spawn-child" in d:
        spawn_child()
    if "oom" in d:
        out.text("I'll load everything into memory.")
        eat_memory(out)

    acting = any(name in ACTIONS for name in d)
    out.text("I'll add a todo list to the app." if not acting
             else "I'll make the requested changes.")
    if "sleep" in d:
        sleep_with_progress(out, max(0.0, number(first("sleep"), 0.0)))
    if "quiet" in d:
        time.sleep(max(0.0, number(first("quiet"), 0.0)))

    done = []
    content = first("content")
    content = DEFAULT_CONTENT if content is None \
        else content.replace("\\n", "\n")
    for rel in d.get("write", []):
        if not rel:
            continue
        write_text(rel, content)
        out.tool("write", rel, {"content": content})
        done.append("wrote " + rel)
    for rel in d.get("delete", []):
        if not rel:
            continue
        try:
            os.remove(rel)
            out.tool("bash", "rm " + rel, {"description": "Delete " + rel})
        except OSError as e:
            out.tool("bash", "rm " + rel, {"description": "Delete " + rel},
                     error="rm: cannot remove '%s': %s" % (rel, e.strerror))
        done.append("deleted " + rel)
    if "lines" in d:
        n = max(0, number(first("lines"), 0, int))
        stream_lines(out, n, max(0.0, number(first("interval_ms"), 0.0)))
        done.append("printed %d lines" % n)

    if acting:
        final = "Done: %s." % ", ".join(done) if done else "Done."
    else:
        rel = add_todo_list(out)
        final = ("Added a todo list to %s: a \"Todo list\" heading, an input "
                 "with an Add button and a Delete button per item; items are "
                 "kept in localStorage under \"todos\"." % rel)
    out.text(final)
    out.finish(final)
    return max(0, min(255, number(first("exit"), 0, int)))


def main(argv):
    if not argv:
        sys.stderr.write("usage: fake_agent.py opencode|claude ARGS...\n")
        return 2
    cli, args = argv[0], argv[1:]
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    sys.stderr.write(json.dumps({"fake_argv": [cli] + args,
                                 "cwd": os.getcwd()}, **compact) + "\n")
    sys.stderr.write(json.dumps({"fake_env_names": sorted(os.environ)},
                                **compact) + "\n")
    sys.stderr.flush()
    try:
        prompt, opts = parse_command_line(cli, args)
    except Refused as e:
        sys.stderr.write("fake %s: %s\nusage: %s\n"
                         % (cli, e, USAGE.get(cli, "opencode|claude ...")))
        return 2
    return run(cli, prompt, opts)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
