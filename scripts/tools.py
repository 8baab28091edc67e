#!/usr/bin/env python3
"""The tools the tests and benchmarks call, against what a fresh machine has.

  scripts/tools.py            check (scripts/lint tools runs it)
  scripts/tools.py --list     print "command path package priority" for
                              each command found

A fresh Debian 12 machine has the packages of priority required or
important (and the Essential ones), gcc, make, git, python3, node, npm and
a Docker client; scripts/bootstrap installs the rest (its packages=(...)
list).  Every command that a shell script of tests/ or bench/ runs on the
host (or looks up with command -v, or names as /usr/bin/NAME) must be a
shell builtin or keyword, a function of the scripts, a file of the repo, a
program the project builds (the Makefile's $(BUILD)/NAME) or a lockfile's
package puts in node_modules/.bin, or come from a Debian package of
priority required or important or in bootstrap's list.  A command's
package is what `dpkg -S` says of the file `command -v` finds: so the
check runs on a machine where the tests pass, and fails on a call of a
program that was installed by hand.  Python's imports must be of the standard library, of the repo, or
of a Debian package as above; Node's of its built-in modules, or of a
package some package-lock.json of the repo holds.

The shell is read by a small tokenizer, not a parser: the first word of
each simple command (after a newline, ;, &, |, &&, ||, (, $(, `, {, and
the keywords that start a command), skipping assignments, redirections
and the prefixes that run the word after them (exec, timeout N, env,
setsid, nohup, xargs, ...).  Single-quoted text is not read (it is what
`docker exec ... sh -c '...'` runs in a sandbox, or a program's text);
double-quoted text only for its $(...) and `...`.  Here-document bodies
are skipped, but for their Python imports when python reads them.
tests/fake-agent/ runs in the sandbox image, not on the host: not read;
nor tests/fixtures/starters/ (apps the tests import into sandboxes).
"""
import ast
import json
import os
import re
import subprocess
import sys

ROOTS = ('tests', 'bench')
SKIP = ('tests/fake-agent/', 'tests/unit/', 'tests/fuzz/',
        'tests/fixtures/starters/')
# What the brief of a fresh machine gives besides the required packages.
GIVEN = {'gcc', 'cc', 'make', 'git', 'python3', 'node', 'npm', 'npx', 'docker'}
# Words after which the next word is a command again; and those that run
# their argument (their options skipped).
STARTERS = {'if', 'then', 'else', 'elif', 'do', 'while', 'until', '!',
            'time', '{', 'exec', 'nohup', 'setsid', 'sudo', 'xargs', 'nice',
            'stdbuf', 'env', 'timeout', 'unshare', 'chroot', 'flock',
            'coproc'}
ENDS = {'fi', 'done', 'esac', '}', 'in', ';;', 'then', 'else', 'do'}


def sh(*argv):
    return subprocess.run(argv, capture_output=True, text=True).stdout


def bootstrap_packages(repo):
    text = open(os.path.join(repo, 'scripts/bootstrap')).read()
    m = re.search(r'^packages=\((.*?)^\)', text, re.M | re.S)
    words = re.sub(r'#[^\n]*', ' ', m.group(1)).split() if m else []
    return set(words)


class Shell:
    """The commands of one shell script: (word, line) pairs."""

    def __init__(self, text):
        self.s = text
        self.i = 0
        self.calls = []
        self.cases = 0      # case statements open
        self.pattern = False  # at a case pattern
        self.pyheredocs = []
        self.pending = []   # here-documents that start on the next line

    @property
    def line(self):
        return self.s.count('\n', 0, self.i) + 1

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else '\0'

    def word(self):
        """One word at i, its quotes kept, its $( ) and ` ` read."""
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in ' \t\n;&|<>()' and not (c in '<>' and out and
                                             out[-1] in '<>'):
                if c == '(' and out and out[-1] in '=@?*+!':
                    out.append(self.skip_parens())   # arr=( ... ), @( )
                    continue
                break
            if c == "'":
                j = self.s.find("'", self.i + 1)
                j = len(self.s) if j < 0 else j
                out.append(self.s[self.i:j + 1])
                self.i = j + 1
            elif c == '"':
                out.append(self.dquote())
            elif c == '$' and self.peek(1) == '{':
                out.append(self.skip_parens(2, '{}'))
            elif c == '$' and self.peek(1) == '(':
                if self.peek(2) == '(':
                    out.append(self.skip_parens(2))
                else:
                    self.i += 2
                    self.list_(')')
                    out.append('$()')
            elif c == '`':
                self.i += 1
                self.list_('`')
                out.append('``')
            elif c == '\\':
                out.append(self.s[self.i:self.i + 2])
                self.i += 2
            else:
                out.append(c)
                self.i += 1
        return ''.join(out)

    def skip_parens(self, n=1, pair='()'):
        """Skips to the end of the bracket at i (after n-1 characters)."""
        start, depth = self.i, 0
        self.i += n - 1
        while self.i < len(self.s):
            c = self.s[self.i]
            depth += (c == pair[0]) - (c == pair[1])
            self.i += 1
            if depth == 0:
                break
        return self.s[start:self.i]

    def dquote(self):
        self.i += 1
        while self.i < len(self.s) and self.s[self.i] != '"':
            c = self.s[self.i]
            if c == '\\':
                self.i += 2
            elif c == '$' and self.peek(1) == '(' and self.peek(2) != '(':
                self.i += 2
                self.list_(')')
            elif c == '`':
                self.i += 1
                self.list_('`')
            else:
                self.i += 1
        self.i += 1
        return '"…"'

    def heredocs(self):
        """At a newline: skips the bodies of the here-documents pending."""
        for delim, python in self.pending:
            end = re.compile(r'^\t*' + re.escape(delim) + r'$', re.M)
            m = end.search(self.s, self.i)
            stop = m.start() if m else len(self.s)
            if python:
                self.pyheredocs.append((self.s[self.i:stop], self.line))
            self.i = m.end() if m else len(self.s)
        self.pending = []

    def case_pattern(self):
        """At a case pattern (or esac): skips to its ')'."""
        m = re.compile(r'esac\b').match(self.s, self.i)
        if m:
            self.pattern = False
            self.cases -= 1
            self.i = m.end()
            return
        while self.i < len(self.s) and self.s[self.i] != ')':
            c = self.s[self.i]
            if c in '"\'':
                self.word()
            else:
                self.i += 1 + (c == '\\')
        self.i += 1
        self.pattern = False

    def list_(self, close=None):
        """Commands until close (')' or '`') or the end."""
        cmd, cond = True, False
        words = []   # of the current simple command
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == close:
                self.i += 1
                return
            if c == '\n':
                self.i += 1
                self.heredocs()
                if not cond:
                    cmd, words = True, []
                continue
            if c in ' \t' or (c == '\\' and self.peek(1) == '\n'):
                self.i += 1 + (c == '\\')
                continue
            if self.pattern and cmd:
                self.case_pattern()
                continue
            if c == '#' and (self.i == 0 or self.s[self.i - 1] in ' \t\n;'):
                j = self.s.find('\n', self.i)
                self.i = len(self.s) if j < 0 else j
                continue
            if cond and c in ';&|()<>':
                self.i += 1
                continue
            if c in ';&|(':
                m = re.compile(r';;&|;;|;&').match(self.s, self.i)
                if m:   # the end of a case's branch
                    self.pattern = self.cases > 0
                    self.i = m.end() - 1
                self.i += 1
                if c == '(' and self.peek() == '(':
                    self.i -= 1
                    self.skip_parens()
                    continue
                cmd, words = True, []
                continue
            if c == ')':
                self.i += 1
                cmd = True
                continue
            if c in '<>':
                m = re.compile(r'<<-?\s*([\'"]?)(\w+)\1').match(self.s, self.i)
                if m:
                    here = ' '.join(words)
                    self.pending.append((m.group(2), 'python' in here or
                                         'pyclient' in here))
                    self.i = m.end()
                    continue
                while self.peek() in '<>&':
                    self.i += 1
                if self.peek() == '(':   # <( ... ) runs commands
                    self.i += 1
                    self.list_(')')
                    continue
                while self.peek() in ' \t':
                    self.i += 1
                self.word()
                continue
            w = self.word()
            if not w:
                self.i += 1
                continue
            words.append(w)
            if cond:
                cond = w != ']]'
                continue
            if re.fullmatch(r'\d+', w) and self.peek() in '<>':
                continue   # 2>&1
            if w == 'in' and words[0] == 'case' and len(words) == 3:
                self.cases += 1
                self.pattern = True
                continue
            if w == 'esac':
                self.cases -= 1
                self.pattern = False
            if not cmd:
                if w in ENDS:
                    cmd = w not in ('in', 'esac', 'fi', 'done', '}')
                continue
            if w == '[[':
                cond = True
            cmd = self.command_word(w, words)

    def command_word(self, w, words):
        """w at command position: records it, returns whether the next
        word is a command too."""
        if re.match(r'^[A-Za-z_]\w*(\[[^]]*\])?\+?=', w):
            return True   # an assignment
        if w.endswith(')') and w.count('(') < w.count(')'):
            return True   # a case pattern
        if w in ('for', 'select', 'case', 'function', 'local', 'declare',
                 'export', 'readonly', 'typeset', '[[', '((', 'command',
                 'type', 'hash', 'unset', 'alias', 'trap', 'return', 'exit',
                 'break', 'continue', 'wait', 'kill', 'shift', 'read',
                 'echo', 'printf', 'cd', 'test', '[', 'eval', 'source',
                 '.', 'set', 'shopt', 'mapfile', 'readarray', 'let',
                 'compgen', 'complete', 'pushd', 'popd', 'getopts', 'umask',
                 'ulimit', 'builtin', 'true', 'false', ':', 'printf'):
            return False   # not followed by a command (trap's text aside)
        if w in ('}', 'fi', 'done', 'esac', 'then', 'do', 'else', 'elif'):
            return w not in ('}', 'fi', 'done', 'esac')
        if words[:-1] and words[-2] == 'coproc' and self.peek(1) == '{':
            return True   # coproc NAME { ... }
        if w in STARTERS:
            return True
        prefix = set(words[:-1]) & STARTERS
        if prefix and (w.startswith('-') or '=' in w or words[-2] in (
                '-u', '-k', '-s', '-n', '-I', '-P', '-d')):
            return True   # an option, its value, env's NAME=value
        if 'timeout' in prefix and re.fullmatch(r'[\d.]+[smhd]?', w):
            return True   # timeout's duration
        self.calls.append((w, self.line))
        return False


LOOKUP = re.compile(r'\b(?:command\s+-[vV]|type\s+-P)\s+["\']?([\w.+-]+)')
ABSPATH = re.compile(r'(?<![\w./-])((?:/usr)?/s?bin/[\w.+-]+)')


def shell_calls(text):
    """The commands of a shell script, with the programs it looks up
    (command -v X: a test looks up what it means to run, through a
    variable maybe)."""
    p = Shell(text)
    p.list_()
    for m in LOOKUP.finditer(text):
        p.calls.append((m.group(1), text.count('\n', 0, m.start()) + 1))
    return p.calls, p.pyheredocs


def abs_programs(text):
    """Programs named by their path (CHROMIUM=${CHROMIUM:-/usr/bin/...}),
    but the files the script writes (>/usr/sbin/...)."""
    written = set(re.findall(r'>\s*((?:/usr)?/s?bin/[\w.+-]+)', text))
    return [(m.group(1), text.count('\n', 0, m.start()) + 1)
            for m in ABSPATH.finditer(text)
            if m.group(1) not in written
            and os.path.basename(m.group(1)) not in GIVEN]


def functions(text):
    return set(re.findall(r'^\s*(?:function\s+)?([A-Za-z_][\w:.-]*)\s*\(\)',
                          text, re.M))


def py_imports(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [(m, 0) for m in re.findall(
            r'^\s*(?:import|from)\s+([A-Za-z_]\w*)', text, re.M)]
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out += [(a.name.split('.')[0], n.lineno) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            out.append((n.module.split('.')[0], n.lineno))
    return out


JS_IMPORT = re.compile(r'''(?:^\s*import\b[^'"]*?\bfrom\s*|^\s*import\s*|'''
                       r'''\bimport\(\s*|\brequire\(\s*)['"]([^'"]+)['"]''',
                       re.M)


def js_imports(text):
    out = []
    for m in JS_IMPORT.finditer(text):
        name = m.group(1)
        if name.startswith(('.', '/', 'node:')):
            continue
        name = '/'.join(name.split('/')[:2 if name.startswith('@') else 1])
        out.append((name, text.count('\n', 0, m.start()) + 1))
    return out


def kind(path, text):
    first = text.split('\n', 1)[0]
    if path.endswith(('.sh', '.bash')) or re.match(r'#!.*\b(ba)?sh\b', first):
        return 'sh'
    if path.endswith('.py') or re.match(r'#!.*python', first):
        return 'py'
    if path.endswith(('.mjs', '.js', '.cjs')) or re.match(r'#!.*node', first):
        return 'js'
    return None


class Packages:
    """Debian's view of this machine: which package owns a file, and the
    priority of each package."""

    def __init__(self, paths):
        self.owner = {}
        out = subprocess.run(['dpkg', '-S'] + sorted(paths),
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            pkgs, _, path = line.partition(': ')
            if path.strip() in paths:
                self.owner[path.strip()] = pkgs.split(',')[0].split(':')[0]
        names = sorted(set(self.owner.values()))
        self.priority = {}
        if names:
            out = subprocess.run(
                ['dpkg-query', '-W', '-f', '${Package} ${Priority} ${Essential}\n']
                + names, capture_output=True, text=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 2:
                    self.priority[f[0]] = 'required' if f[-1] == 'yes' else f[1]


def variants(path):
    """The names dpkg may know a file by (merged /usr, links)."""
    out = [path, os.path.realpath(path)]
    for p in list(out):
        if p.startswith('/usr/'):
            out.append(p[4:])
        elif p.startswith(('/bin/', '/sbin/', '/lib/')):
            out.append('/usr' + p)
    return list(dict.fromkeys(out))


def repo_files(*roots):
    """The files git tracks or would under roots (all files of them out
    of a git work tree, as in scripts/lint-selftest's copies)."""
    r = subprocess.run(['git', 'rev-parse', '--show-prefix'],
                       capture_output=True, text=True)
    if r.returncode == 0 and r.stdout.strip() == '':
        return subprocess.run(['git', 'ls-files', '-co', '--exclude-standard',
                               '--'] + list(roots), capture_output=True,
                              text=True).stdout.split()
    out = []
    for root in roots or ('.',):
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in ('node_modules', '.git')]
            out += [os.path.normpath(os.path.join(d, n)) for n in names]
    return out


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(repo)
    listing = '--list' in sys.argv
    files = repo_files(*ROOTS)
    files = [f for f in files if not f.startswith(SKIP) and os.path.isfile(f)]
    boot = bootstrap_packages(repo)
    texts, funcs = {}, set()
    for f in files:
        try:
            texts[f] = open(f, encoding='utf-8', errors='replace').read()
        except OSError:
            continue
    # Functions any script defines, and the repo's own file names.
    for f, t in texts.items():
        if kind(f, t) == 'sh':
            funcs |= functions(t)
    ours = {os.path.basename(p) for p in repo_files()}
    ours |= set(re.findall(r'^\$\(BUILD\)/([\w-]+):', open('Makefile').read(),
                           re.M))
    builtins = set(sh('bash', '-c', 'compgen -b; compgen -k').split())
    # Node packages of the repo's lockfiles, and the programs they put in
    # node_modules/.bin.
    locked = set()
    for lock in repo_files():
        if not lock.endswith('package-lock.json') or 'node_modules' in lock:
            continue
        try:
            pkgs = json.load(open(lock)).get('packages', {})
        except (OSError, ValueError):
            continue
        locked |= {k.split('node_modules/')[-1] for k in pkgs if k}
        for v in pkgs.values():
            if isinstance(v.get('bin'), dict):
                ours |= set(v['bin'])
    calls, pymods, jsmods = {}, {}, {}
    for f, t in texts.items():
        k = kind(f, t)
        if k:
            for w, line in abs_programs(t):
                calls.setdefault(w, (f, line))
        if k == 'sh':
            found, heredocs = shell_calls(t)
            for w, line in found:
                calls.setdefault(w, (f, line))
            for body, line in heredocs:
                for m, _ in py_imports(body):
                    pymods.setdefault(m, (f, line))
        elif k == 'py':
            for m, line in py_imports(t):
                pymods.setdefault(m, (f, line))
        elif k == 'js':
            for m, line in js_imports(t):
                jsmods.setdefault(m, (f, line))
    bad = []
    where = {}   # command -> path found
    names = [w for w in sorted(calls) if not (
        w in builtins or w in funcs or w in ours or w in GIVEN or
        not re.fullmatch(r'[A-Za-z0-9_.+-]+|(/usr)?/s?bin/[\w.+-]+', w))]
    found = sh('bash', '-c', 'for w; do if [[ $w == /* ]]; then '
               '[[ -x $w ]] && echo "$w" || echo -; else '
               'command -v -- "$w" || echo -; fi; done',
               '_', *names).split('\n')
    for w, path in zip(names, found):
        if not path.startswith('/'):
            bad.append('%s:%d: %s: not found on this machine' %
                       (calls[w] + (w,)))
            continue
        where[w] = path
    # Python modules: the standard library, the repo's, or a file of a
    # Debian package.
    stdlib = set(sys.stdlib_module_names)
    pyfiles = {}
    for m in sorted(pymods):
        if m in stdlib or m + '.py' in ours or m in ours or m == '__future__':
            continue
        for d in ('/usr/lib/python3/dist-packages/',):
            for cand in (d + m, d + m + '.py'):
                if os.path.exists(cand):
                    pyfiles[m] = cand
        if m not in pyfiles:
            bad.append('%s:%d: python module %s: in no Debian package here '
                       '(install python3-%s in scripts/bootstrap)' %
                       (pymods[m] + (m, m)))
    every = set()
    for p in list(where.values()) + list(pyfiles.values()):
        every.update(variants(p))
    deb = Packages(every)
    for w, path in sorted(where.items()) + [('python module ' + m, p) for
                                            m, p in sorted(pyfiles.items())]:
        pkg = next((deb.owner[v] for v in variants(path) if v in deb.owner),
                   None)
        prio = deb.priority.get(pkg, '?')
        if listing:
            print(w, path, pkg, prio)
        if pkg is None:
            origin = calls.get(w) or pymods.get(w.split()[-1])
            bad.append('%s:%d: %s (%s) is in no Debian package: installed by '
                       'hand?' % (origin + (w, path)))
        elif prio not in ('required', 'important') and pkg not in boot:
            origin = calls.get(w) or pymods.get(w.split()[-1])
            bad.append('%s:%d: %s: package %s (priority %s) is not in '
                       'scripts/bootstrap\'s packages' %
                       (origin + (w, pkg, prio)))
    # Node's own modules.
    try:
        node_builtin = set(json.loads(sh(
            'node', '-p', 'JSON.stringify(require("module").builtinModules)')))
    except (OSError, ValueError):
        node_builtin = set()
    for m in sorted(jsmods):
        if m in node_builtin or m in locked:
            continue
        bad.append('%s:%d: node package %s is in no package-lock.json of the '
                   'repo' % (jsmods[m] + (m,)))
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
