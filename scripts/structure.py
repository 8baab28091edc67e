#!/usr/bin/env python3
"""Structure checks of src/ that scripts/lint runs (no third-party module).

  scripts/structure.py functions FILE...   print "LINES path:line name" for
                                           every function body
  scripts/structure.py cycles              print every include or call
                                           cycle between files of src/

A file's module is its path without .c or .h: a .c file and its header
are one node.  An include edge goes from the module that includes to the
module included (a .c including a directory's shared header, internal.h
with no .c of its own, is not one: that header only declares); a call
edge from a module to the module that defines, not static, a function or
variable it names (comments and strings stripped, a name defined in more
than one module of the same program ignored).  A header's function-like
macros and inline functions are its module's too: a .c that uses one
calls that module, and what their bodies name, the header calls.  The
supervisor is its own program.  Cycles are Tarjan's strongly connected
components of more than one node; for each, one cycle through it is
printed with the includes or names behind each step.
"""
import os
import re
import sys

IDENT = re.compile(r'[A-Za-z_]\w*')
# A name used, not a member (after . or ->) nor a tag (after struct, enum
# or union).
USE = re.compile(r'(?<![\w.>])(?<!struct )(?<!enum )(?<!union )([A-Za-z_]\w*)')
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)


def blank(m):
    return re.sub(r'[^\n]', ' ', m.group(0))


# __attribute__((format(printf, 2, 3))) before a function's name is not
# its name.
ATTRIBUTE = re.compile(r'__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)')


def strip(s):
    """s with its comments and string and character literals blanked."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'',
                  blank, s, flags=re.S)


def clean(s):
    """s stripped, its preprocessor lines blanked too."""
    s = strip(s)
    return re.sub(r'^[ \t]*#([^\n]*\\\n)*[^\n]*', blank, s, flags=re.M)


def bodies(path):
    """(lines, first line, name, static, head) of each function body."""
    s = clean(open(path, errors='replace').read())
    depth = start = 0
    head = None
    hpos = 0
    out = []
    for i, c in enumerate(s):
        if c == '{':
            if depth == 0:
                h = s[start:i]
                head = h if re.search(r'\)\s*$', h) and '=' not in h else None
                hpos = start
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0 and head is not None:
                m = re.search(r'([A-Za-z_]\w*)\s*\(', ATTRIBUTE.sub(blank, head))
                if m:
                    l0 = s.count('\n', 0, hpos + m.start(1)) + 1
                    out.append((s.count('\n', 0, i) + 2 - l0, l0, m.group(1),
                                re.search(r'\bstatic\b', head) is not None))
                start, head = i + 1, None
        elif c == ';' and depth == 0:
            start = i + 1
    return out


def globals_of(text):
    """Names of non-static file-scope variables defined in cleaned text."""
    names = set()
    depth = 0
    stmt = []
    typedef_body = False
    for c in text:
        if c == '{':
            if depth == 0 and '=' not in ''.join(stmt):
                typedef_body = True
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0 and typedef_body:
                stmt = []  # a function or a type's body ends the statement
        elif depth == 0:
            if c == ';':
                st = ''.join(stmt).strip()
                stmt = []
                was_type, typedef_body = typedef_body, False
                if was_type or not st or re.search(r'\b(static|extern|typedef)\b', st):
                    continue
                if '(' in st.split('=')[0]:
                    continue
                m = re.search(r'([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*(=|$)', st)
                if m and len(IDENT.findall(st.split('=')[0])) >= 2:
                    names.add(m.group(1))
                continue
            stmt.append(c)
    return names


def sources():
    out = []
    for root, _, files in os.walk('src'):
        for f in files:
            if f.endswith(('.c', '.h')):
                out.append(os.path.join(root, f))
    return sorted(out)


def module(path):
    return path[len('src/'):].rsplit('.', 1)[0]


def program(path):
    return 'supervisor' if path.startswith('src/supervisor/') else 'daemon'


def include_graph(files):
    """The include graph and, for each edge, the includes behind it."""
    g = {}
    why = {}
    for p in files:
        a = module(p)
        g.setdefault(a, set())
        text = open(p, errors='replace').read()
        d = os.path.dirname(p)[len('src/'):]
        for inc in INCLUDE.findall(text):
            b = inc if '/' in inc else d + '/' + inc
            b = b.rsplit('.', 1)[0]
            if b == a or not os.path.exists('src/' + b + '.h'):
                continue
            # A shared header of a directory (internal.h: no .c of its
            # own) declares and never calls: a .c including it is not an
            # edge, what it includes is.
            if p.endswith('.c') and not os.path.exists('src/' + b + '.c'):
                continue
            g[a].add(b)
            why.setdefault((a, b), []).append(f'{p[len("src/"):]} includes "{inc}"')
    return g, why


# A function-like macro of a header: its name and its body.
MACRO = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)'
                   r'((?:[^\n]*\\\n)*[^\n]*)', re.M)


def header_code(path):
    """Names a header defines for its includers to call (function-like
    macros, inline functions), and the text of their bodies: what the
    header itself calls."""
    raw = open(path, errors='replace').read()
    names, parts = set(), []
    for m in MACRO.finditer(strip(raw)):
        names.add(m.group(1))
        parts.append(m.group(3))
    lines = clean(raw).split('\n')
    for (n, l0, name, _) in bodies(path):
        names.add(name)
        parts.append('\n'.join(lines[l0:l0 + n - 1]))  # after the name line
    return names, '\n'.join(parts)


def call_graph(files):
    """The call graph and, for each edge, the names behind it."""
    defs = {}
    uses = {}
    for p in files:
        if p.endswith('.c'):
            text = clean(open(p, errors='replace').read())
            names = {n for (_, _, n, st) in bodies(p) if not st}
            names |= globals_of(text)
        else:
            names, text = header_code(p)
        uses[p] = text
        for n in names:
            defs.setdefault((program(p), n), set()).add(module(p))
    g = {}
    why = {}
    for p, text in uses.items():
        a = module(p)
        g.setdefault(a, set())
        for n in set(USE.findall(text)):
            where = defs.get((program(p), n))
            if where and len(where) == 1:
                b = next(iter(where))
                if b != a:
                    g[a].add(b)
                    why.setdefault((a, b), set()).add(n)
    return g, {k: sorted(v) for k, v in why.items()}


def sccs(g):
    index = {}
    low = {}
    stack = []
    on = set()
    out = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def cycle_path(g, comp):
    """One cycle through the component, as a list of nodes."""
    comp = set(comp)
    start = min(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(g.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return [start] + list(reversed(path[:-1])) + [start] if len(path) > 1 else [start, v, start]
            if w in comp and w not in prev:
                prev[w] = v
                queue.append(w)
    return sorted(comp)


def cmd_cycles():
    files = sources()
    bad = 0
    for kind, (g, why) in (('include', include_graph(files)),
                           ('call', call_graph(files))):
        for comp in sccs(g):
            bad = 1
            print(f'{kind} cycle between {len(comp)} files: ' + ' '.join(comp))
            path = cycle_path(g, comp)
            print('  for one: ' + ' -> '.join(path))
            for a, b in zip(path, path[1:]):
                w = why.get((a, b), [])
                more = f', ... ({len(w)})' if len(w) > 4 else ''
                print(f'    {a} -> {b}: ' + ', '.join(w[:4]) + more)
    return bad


def cmd_functions(paths):
    for p in paths:
        for (n, l0, name, _) in bodies(p):
            print(n, f'{p}:{l0}', name)
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == 'cycles':
        return cmd_cycles()
    if len(argv) >= 2 and argv[1] == 'functions':
        return cmd_functions(argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
