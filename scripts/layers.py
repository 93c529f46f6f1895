#!/usr/bin/python3
"""Measures the layout of the source tree: layers, arrows, circles, long
functions, tests that reach into src/, and comments that tell history.

    /usr/bin/python3 scripts/layers.py [--source DIR] [--build DIR] [--config FILE]
        [--explain] [--check] [--max-back N] [--max-spanning N] [--max-lines N]
        [--soft-lines N] [--max-tests N] [--max-unexplained N] [--max-comments N]

Arrows. An arrow A -> B between two files of the measured tree (the
`arrows` paths of the config) is one of:
  - include: A has `#include "..."` of B, resolved like the compiler does
    (A's folder, then src/, then include/);
  - call: A's object file has an undefined symbol (a function called or a
    table referenced) that B's object file defines. The symbols are read
    with `nm` from the objects of the build directory (CMake records which
    source each object is compiled from in DependInfo.cmake); the
    complex-step objects (symbols *_cs) count for the source they are
    compiled from. Symbols are what the linker sees, so macros, static
    functions and a function pointer passed through a table are all
    resolved as they really are, with no parsing of C.
An arrow is counted once however many includes and symbols carry it.
It runs back up when the target's layer is above the source's (a file's
layer comes from the config). Circles are the strongly connected
components of the arrows with more than one file.

Functions. Definitions are found in the source with comments, strings and
preprocessor lines blanked: a top-level `{` after `name(...)`. A function
counts from the line that names it to its closing brace. One
longer than --soft-lines is accepted when a comment directly above it, or
at the top of its body, holds `long-function: REASON`; one longer than
--max-lines fails --check whatever it says.

Tests. A test source "includes src/" when one of its `#include "..."`
resolves to a file under src/ (directly, or through a header of tests/)
other than the documented internal test header (`test-header` in the
config, once it exists).

Comments. Comment lines of the `comments` paths that match history,
issue talk, benchmark figures, dates, or name a file that is not in the
repository are listed; --max-comments bounds their number.

Folder notes. Each folder of a layer has a README.md saying what it
holds and, on a paragraph that starts with "May include:", the paths of
the layers below it in the order of the config ("no other folder" for the
lowest); the report lists those that are missing or differ.

--check exits 1 when more than --max-spanning circles span two folders
(default 0), more than --max-back arrows run back up (default 8), a
function exceeds --max-lines (default 150), more than --max-unexplained
functions exceed --soft-lines without a reason, more than --max-tests test
sources include src/, more than --max-comments comment lines are flagged
(these three when given), a measured file has no layer, or a folder note
is missing or differs from the config; the
defaults are the targets of docs/architecture.md; limits set to the
figures of the day and lowered commit by commit make a ratchet;
exit 2 means the measurement could not be made (e.g. missing or stale
objects: build the targets mbsens_obj and mbsens_cs first).
The output is a function of the sources and objects only (sorted, no
times, no absolute paths), so two runs on one tree print the same text.
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

SRC_EXT = ('.c', '.h')


def die(msg):
    print('layers.py: ' + msg, file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- config

class Config:
    def __init__(self):
        self.layers = []           # names, lowest first
        self.paths = []            # (path, layer index)
        self.sets = {'arrows': [], 'functions': [], 'tests': [], 'test-header': [], 'outside': [],
                     'comments': []}

    def layer_of(self, f):
        """(index, name) of the layer of file f, or (None, None)."""
        best, idx = -1, None
        for p, i in self.paths:
            hit = f.startswith(p) if p.endswith('/') else f == p
            if hit and len(p) > best:
                best, idx = len(p), i
        return (idx, self.layers[idx]) if idx is not None else (None, None)


def read_config(path):
    cfg = Config()
    lines = []
    with open(path, encoding='utf-8') as fh:
        for n, raw in enumerate(fh, 1):
            text = raw.split('#', 1)[0].rstrip()
            if not text.strip():
                continue
            if text[0].isspace():
                if not lines:
                    die('%s:%d: continuation line with nothing to continue' % (path, n))
                lines[-1][1].extend(text.split())
            else:
                lines.append((n, text.split()))
    for n, words in lines:
        key = words[0]
        if key == 'layer' and len(words) >= 3:
            if words[1] in cfg.layers:
                die('%s:%d: layer %s declared twice' % (path, n, words[1]))
            cfg.layers.append(words[1])
            cfg.paths += [(p, len(cfg.layers) - 1) for p in words[2:]]
        elif key in cfg.sets and len(words) >= 2:
            cfg.sets[key] += words[1:]
        else:
            die('%s:%d: expected "layer NAME PATH..." or one of %s PATH...'
                % (path, n, ', '.join(sorted(cfg.sets))))
    seen = {}
    for p, i in cfg.paths:
        if p in seen:
            die('%s: %s is in layers %s and %s' % (path, p, cfg.layers[seen[p]], cfg.layers[i]))
        seen[p] = i
    return cfg


def in_set(f, paths):
    return any(f.startswith(p) if p.endswith('/') else f == p for p in paths)


# ---------------------------------------------------------------- files

def skip_dir(d, name):
    """Hidden folders and CMake build directories are not sources."""
    return name.startswith('.') or os.path.exists(os.path.join(d, name, 'CMakeCache.txt'))


def list_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if not skip_dir(d, x))
        for f in files:
            if f.endswith(SRC_EXT):
                out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


def read(root, f):
    with open(os.path.join(root, f), encoding='utf-8', errors='replace') as fh:
        return fh.read()


def strip_c(text):
    """(code, comments): code with comments, string and character literals
    and preprocessor lines blanked (newlines kept, so offsets and lines
    stay), and the comments as (first line, text)."""
    out = list(text)
    comments = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            i += 1
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            comments.append((line, text[i + 2:j]))
            for k in range(i, j):
                out[k] = ' '
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            comments.append((line, text[i + 2:j - 2]))
            for k in range(i, j):
                if text[k] != '\n':
                    out[k] = ' '
            line += text.count('\n', i, j)
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            for k in range(i + 1, min(j, n)):
                out[k] = ' '
            i = j + 1
        else:
            i += 1
    code = ''.join(out).split('\n')
    k = 0
    while k < len(code):                      # preprocessor lines, with continuations
        if code[k].lstrip().startswith('#'):
            while True:
                cont = code[k].rstrip().endswith('\\')
                code[k] = ''
                k += 1
                if not cont or k >= len(code):
                    break
        else:
            k += 1
    return '\n'.join(code), comments


INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def resolve_include(root, f, name, files):
    for base in (os.path.dirname(f), 'src', 'include'):
        cand = os.path.normpath(os.path.join(base, name))
        if cand in files:
            return cand
    return None


def includes_of(root, f, files):
    """[(line, target)] of the quoted includes of f that resolve in the tree."""
    text = read(root, f)
    out = []
    for m in INCLUDE_RE.finditer(text):
        t = resolve_include(root, f, m.group(1), files)
        if t:
            out.append((text.count('\n', 0, m.start()) + 1, t))
    return out


# ---------------------------------------------------------------- objects

DEPFILES_RE = re.compile(r'set\(CMAKE_DEPENDS_DEPENDENCY_FILES(.*?)\)', re.S)


def objects_of(build, root):
    """{source (relative to root): [object paths]} from the CMake build dir."""
    objs = defaultdict(list)
    rootabs = os.path.realpath(root)
    for d, dirs, files in os.walk(build):
        dirs.sort()
        if 'DependInfo.cmake' not in files:
            continue
        m = DEPFILES_RE.search(read(d, 'DependInfo.cmake'))
        if not m:
            continue
        words = re.findall(r'"([^"]*)"', m.group(1))
        for k in range(0, len(words) - 3, 4):
            src, obj, dep = words[k], words[k + 1], words[k + 3]
            src = os.path.realpath(src)
            if not src.startswith(rootabs + os.sep):
                continue
            objs[os.path.relpath(src, rootabs)].append(
                (os.path.join(build, obj), os.path.join(build, dep)))
    return objs


def stale(obj, dep, build):
    """The first input of obj (from its compiler dependency file) that is
    newer than it, or None."""
    t = os.path.getmtime(obj)
    if not os.path.exists(dep):
        return None
    with open(dep, encoding='utf-8', errors='replace') as fh:
        words = fh.read().replace('\\\n', ' ').split()
    for w in words[1:]:
        w = w if os.path.isabs(w) else os.path.join(build, w)
        if os.path.exists(w) and os.path.getmtime(w) > t:
            return w
    return None


DEFINED = set('TDBRCGSVWiu')
UNDEFINED = set('Uwv')


def symbols(objs):
    """{object: (defined, undefined)} external symbols of the object files
    (one nm run for all of them)."""
    out = {o: (set(), set()) for o in objs}
    for k in range(0, len(objs), 200):
        chunk = objs[k:k + 200]
        r = subprocess.run(['nm', '-P', '-g', '-A'] + chunk, capture_output=True, text=True)
        if r.returncode != 0:
            die('nm: %s' % r.stderr.strip())
        for ln in r.stdout.splitlines():
            obj, sep, rest = ln.partition(': ')
            w = rest.split()
            if not sep or obj not in out or len(w) < 2:
                continue
            if w[1] in UNDEFINED:
                out[obj][1].add(w[0])
            elif w[1] in DEFINED:
                out[obj][0].add(w[0])
    return out


# ---------------------------------------------------------------- graph

def tarjan(nodes, succ):
    """Strongly connected components (lists of nodes), iteratively."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for v0 in nodes:
        if v0 in index:
            continue
        work = [(v0, iter(sorted(succ.get(v0, ()))))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def build_graph(root, build, cfg, files):
    """arrows {(a, b): {'include': [lines], 'call': [symbols]}} over the
    measured files."""
    measured = [f for f in files if in_set(f, cfg.sets['arrows'])]
    mset = set(measured)
    arrows = defaultdict(lambda: {'include': [], 'call': []})
    for f in measured:
        for line, t in includes_of(root, f, mset):
            if t != f:
                arrows[(f, t)]['include'].append(line)
    objs = objects_of(build, root)
    defined_by, undefined_in = {}, defaultdict(set)
    missing = [f for f in measured if f.endswith('.c') and f not in objs]
    if missing:
        die('no object file in %s for %s (configure and build the library targets first)'
            % (build, ', '.join(missing[:5]) + (' ...' if len(missing) > 5 else '')))
    pairs = []
    for f in measured:
        for obj, dep in sorted(objs.get(f, ())):
            if not os.path.exists(obj):
                die('%s is missing (build the library targets first)' % os.path.relpath(obj))
            newer = stale(obj, dep, build)
            if newer:
                die('%s is older than %s (rebuild first)' % (os.path.relpath(obj), newer))
            pairs.append((f, obj))
    syms = symbols([o for _, o in pairs])
    for f, obj in pairs:
        dfn, und = syms[obj]
        for sym in sorted(dfn):
            if sym in defined_by and defined_by[sym] != f:
                die('%s is defined by both %s and %s' % (sym, defined_by[sym], f))
            defined_by[sym] = f
        undefined_in[f] |= und
    for f, und in undefined_in.items():
        for sym in sorted(und):
            t = defined_by.get(sym)
            if t and t != f:
                arrows[(f, t)]['call'].append(sym)
    return measured, dict(arrows)


# ---------------------------------------------------------------- functions

def functions_of(text):
    """[(name, first line, last line, body start line)] of the function
    definitions of one C file. The first line is the one that names the
    function (attributes and a return type on lines of their own before it
    are not counted)."""
    code, _ = strip_c(text)
    out = []
    depth = 0
    seg_start = 0
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == '{':
            if depth == 0:
                found = definition_name(code[seg_start:i])
                if found:
                    name, at = found
                    j = match_brace(code, i)
                    if j is None:
                        raise ValueError('the body of %s has no closing brace' % name)
                    out.append((name, code.count('\n', 0, seg_start + at) + 1, code.count('\n', 0, j) + 1,
                                code.count('\n', 0, i) + 1))
                    i = j + 1
                    seg_start = i
                    continue
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                seg_start = i + 1
        elif c == ';' and depth == 0:
            seg_start = i + 1
        i += 1
    return out


IDENT_END_RE = re.compile(r'([A-Za-z_]\w*)\s*$')
NOT_NAMES = ('if', 'for', 'while', 'switch', 'return', 'sizeof')


def definition_name(seg):
    """(name, offset of the name in seg) if seg, the text before a
    top-level `{`, is a function header `... name(params)`; else None."""
    s = seg.rstrip()
    if not s.endswith(')'):
        return None
    k = matching_open(s, len(s) - 1)
    if k is None:
        return None
    head = s[:k]
    if depth_zero_has(head, '='):
        return None
    h = head.rstrip()
    if h.endswith(')'):                     # a macro-made name: MBS_K(name)(params)
        k2 = matching_open(h, len(h) - 1)
        if k2 is None:
            return None
        m = re.match(r'\s*([A-Za-z_]\w*)\s*$', h[k2 + 1:-1])
        return (m.group(1), k2 + 1 + m.start(1)) if m else None
    m = IDENT_END_RE.search(h)
    if not m or m.group(1) in NOT_NAMES:
        return None
    return m.group(1), m.start(1)


def matching_open(s, close):
    depth = 0
    for k in range(close, -1, -1):
        if s[k] == ')':
            depth += 1
        elif s[k] == '(':
            depth -= 1
            if depth == 0:
                return k
    return None


def match_brace(code, i):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == '{':
            depth += 1
        elif code[j] == '}':
            depth -= 1
            if depth == 0:
                return j
    return None


def depth_zero_has(s, ch):
    depth = 0
    for c in s:
        if c in '([':
            depth += 1
        elif c in ')]':
            depth -= 1
        elif c == ch and depth == 0:
            return True
    return False


REASON_RE = re.compile(r'long-function:\s*(\S.*)')


def long_reason(text_lines, first, body):
    """The `long-function:` reason written in the comment directly above
    the function (preprocessor and attribute lines between them skipped)
    or in the first comment of its body; None if there is none."""
    def is_comment(ln):
        t = ln.strip()
        return t.startswith(('/*', '*', '//')) or t.endswith('*/')
    k = first - 2
    while k >= 0 and re.match(r'\s*(#|__attribute__)', text_lines[k]):
        k -= 1
    above = []
    while k >= 0 and is_comment(text_lines[k]):
        above.append(text_lines[k])
        k -= 1
    inside = []
    k = body
    while k < len(text_lines) and (not text_lines[k].strip() or is_comment(text_lines[k])):
        inside.append(text_lines[k])
        k += 1
    for block in (list(reversed(above)), inside):
        m = REASON_RE.search(' '.join(x.strip().strip('/*').strip() for x in block))
        if m:
            return m.group(1).strip().rstrip('*/ ').strip()
    return None


# ---------------------------------------------------------------- comments

COMMENT_RULES = [
    ('issue talk', re.compile(r'\b(issues?|session|ticket|reviewer|the lead)\b|#\d+', re.I)),
    ('history', re.compile(r'\b(was|were|used to|previously|formerly|no longer|anymore|before:|after:|'
                           r'as before|before the (change|split|fix|rewrite)|old (code|version)|'
                           r'now (uses|is|does|takes))\b', re.I)),
    ('figures', re.compile(r'\d(\.\d+)?\s*(us|µs|ns|Mcycles|cycles|instructions|Ir)\b|'
                           r'\d(\.\d+)?\s*x\s+(faster|slower)|\b(faster|slower|speed-?up|'
                           r'callgrind|valgrind|perf stat|cachegrind)\b', re.I)),
    ('dates', re.compile(r'\b20\d\d-\d\d(-\d\d)?\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|'
                         r'nov|dec)[a-z]* 20\d\d\b', re.I)),
]
# a file name a comment may point to: path/stem.ext, stem of three
# characters or more in lower case (placeholders such as NAME and globs
# such as *_x.c are left alone)
FILE_REF_RE = re.compile(r'(?<![\w/.*-])((?:[\w.-]+/)*[a-z][a-z0-9_-]{2,}\.(?:md|c|h|py|sh))\b')


def lint_comments(root, files):
    """[(file, line, tags, text)] of the comment lines of files that match
    COMMENT_RULES or name a file that is nowhere in the repository."""
    names = set()
    for d, dirs, fs in os.walk(root):
        dirs[:] = [x for x in dirs if not skip_dir(d, x)]
        rel = os.path.relpath(d, root)
        for f in fs:
            names.add(f)
            names.add(os.path.normpath(os.path.join(rel, f)))
    hits = []
    for f in files:
        _, comments = strip_c(read(root, f))
        for line, text in comments:
            for k, ln in enumerate(text.split('\n')):
                found = [tag for tag, rx in COMMENT_RULES if rx.search(ln)]
                for m in FILE_REF_RE.finditer(ln):
                    ref = m.group(1)
                    if ref not in names and os.path.basename(ref) not in names:
                        found.append('missing file ' + ref)
                if found:
                    hits.append((f, line + k, ', '.join(found), ln.strip(' */')))
    return hits


# ---------------------------------------------------------------- report

class Tree:
    """The measured tree: sources, configuration, arrows, and the report
    being written (one list of lines)."""
    def __init__(self, root, build, cfg):
        self.root, self.build, self.cfg = root, build, cfg
        self.files = list_files(root)
        self.fset = set(self.files)
        self.measured, self.arrows = build_graph(root, build, cfg, self.files)
        self.out = []

    def p(self, line=''):
        self.out.append(line)

    def layer(self, f):
        return self.cfg.layer_of(f)[0]


def report_layers(t):
    """Prints the table of layers and the layers of each folder; returns
    the measured files without a layer."""
    cfg = t.cfg
    t.p('== layers (lowest first)')
    for k, name in enumerate(cfg.layers):
        t.p('%2d %-13s %s' % (k, name, ' '.join(x for x, i in cfg.paths if i == k)))
    t.p()
    folders = defaultdict(lambda: defaultdict(list))
    unassigned = []
    for f in t.measured:
        i, name = cfg.layer_of(f)
        if i is None:
            unassigned.append(f)
        else:
            folders[os.path.dirname(f)][name].append(f)
    t.p('== folders and their layers')
    for d in sorted(folders):
        ls = folders[d]
        names = sorted(ls, key=cfg.layers.index)
        t.p('%-22s %s' % (d + '/', names[0] if len(names) == 1 else
                          ', '.join('%s (%d files)' % (n, len(ls[n])) for n in names)))
    for f in unassigned:
        t.p('%-22s (no layer)' % f)
    t.p()
    return unassigned


def why(v, most=3):
    out = ['include'] if v['include'] else []
    if v['call']:
        c = sorted(v['call'])
        out.append('calls ' + ', '.join(c[:most]) + (' ...' if len(c) > most else ''))
    return '; '.join(out)


def report_arrows(t, explain):
    """Prints the arrows, those running back up, the arrows between layers
    and between folders; returns the arrows running back up."""
    cfg, arrows, lay = t.cfg, t.arrows, t.layer
    back = sorted((a, b) for (a, b) in arrows
                  if lay(a) is not None and lay(b) is not None and lay(b) > lay(a))
    n_inc = sum(1 for v in arrows.values() if v['include'])
    n_call = sum(1 for v in arrows.values() if v['call'])
    t.p('== arrows: %d (%d carried by includes, %d by calls; %d by both)'
        % (len(arrows), n_inc, n_call, n_inc + n_call - len(arrows)))
    t.p('back up the layers: %d' % len(back))
    for a, b in back:
        t.p('  %-40s %-12s -> %-40s %-12s %s' % (a, cfg.layer_of(a)[1], b, cfg.layer_of(b)[1], why(arrows[(a, b)])))
    by_layer = defaultdict(int)
    for a, b in arrows:
        if lay(a) != lay(b):
            by_layer[(lay(a), lay(b))] += 1
    t.p('between layers (source -> target: arrows; ^ runs back up)')
    for la, lb in sorted(by_layer, key=lambda x: (-1 if x[0] is None else x[0], -1 if x[1] is None else x[1])):
        name = lambda i: '(none)' if i is None else cfg.layers[i]
        up = la is not None and lb is not None and lb > la
        t.p('  %-13s -> %-13s %3d%s' % (name(la), name(lb), by_layer[(la, lb)], '  ^' if up else ''))
    d = os.path.dirname
    fold = set((d(a), d(b)) for a, b in arrows if d(a) != d(b))
    fback = set((d(a), d(b)) for a, b in back if d(a) != d(b))
    t.p('folder to folder (the loose files of src/ as the folder src/): %d arrows, %d with an arrow back up'
        % (len(fold), len(fback)))
    roots = set(x.rstrip('/') for x in t.cfg.sets['arrows'])
    unit = lambda f: f if d(f) in roots else d(f)
    uall = set((unit(a), unit(b)) for a, b in arrows if unit(a) != unit(b))
    uback = set((unit(a), unit(b)) for a, b in back if unit(a) != unit(b))
    t.p('unit to unit (each folder one unit, each loose file of src/ one unit): %d arrows, %d with an arrow '
        'back up' % (len(uall), len(uback)))
    if explain:
        t.p('all arrows')
        for (a, b) in sorted(arrows):
            v = arrows[(a, b)]
            w = (['include (line %s)' % ','.join(map(str, v['include']))] if v['include'] else []) + \
                (['calls ' + ' '.join(sorted(v['call']))] if v['call'] else [])
            t.p('  %s -> %s: %s' % (a, b, '; '.join(w)))
    t.p()
    return back


def report_circles(t):
    """Prints the circles; returns (circles, those spanning folders)."""
    succ = defaultdict(set)
    for a, b in t.arrows:
        succ[a].add(b)
    comps = sorted((c for c in tarjan(sorted(t.measured), succ) if len(c) > 1), key=lambda c: (-len(c), c))
    spanning = [c for c in comps if len(set(os.path.dirname(f) for f in c)) > 1]
    t.p('== circles: %d, spanning two folders or more: %d' % (len(comps), len(spanning)))
    for c in comps:
        dirs = sorted(set(os.path.dirname(f) + '/' for f in c))
        t.p('  %d files in %s%s' % (len(c), ' '.join(dirs), '  (spans folders)' if len(dirs) > 1 else ''))
        cs = set(c)
        for f in c:
            t.p('    %s -> %s' % (f, ', '.join(sorted(b for (a, b) in t.arrows if a == f and b in cs))))
    t.p()
    return comps, spanning


def report_functions(t, soft, hard):
    """Prints the functions longer than soft lines; returns (all of them,
    those longer than hard)."""
    funcs = []
    for f in t.files:
        if not in_set(f, t.cfg.sets['functions']):
            continue
        text = read(t.root, f)
        lines = text.split('\n')
        try:
            defs = functions_of(text)
        except ValueError as e:
            die('%s: %s (braces split by the preprocessor?)' % (f, e))
        for name, first, last, body in defs:
            if last - first + 1 > soft:
                funcs.append((last - first + 1, f, name, first, long_reason(lines, first, body)))
    funcs.sort(key=lambda x: (-x[0], x[1], x[3]))
    over = [x for x in funcs if x[0] > hard]
    t.p('== functions over %d lines: %d; over %d lines: %d (%d without a reason)'
        % (hard, len(over), soft, len(funcs), sum(1 for x in funcs if not x[4])))
    for length, f, name, first, reason in funcs:
        t.p('  %4d %s %-28s %s:%d%s' % (length, '!' if length > hard else ' ', name, f, first,
                                        '  long-function: ' + reason if reason else ''))
    t.p()
    return funcs, over


def src_includes(t, f, seen, home):
    """The headers of src/ that f includes, directly or through headers of
    its own tree `home` (the test header of the config excepted)."""
    hits = set()
    for _, h in includes_of(t.root, f, t.fset):
        if h.startswith('src/') and h not in t.cfg.sets['test-header']:
            hits.add(h)
        elif in_set(h, home) and h not in seen:
            seen.add(h)
            hits |= src_includes(t, h, seen, home)
    return hits


def reaching(t, paths):
    """(sources of paths, [(source, src/ headers it includes)])."""
    srcs = [f for f in t.files if in_set(f, paths) and f.endswith('.c')]
    got = [(f, sorted(src_includes(t, f, {f}, paths))) for f in srcs]
    return srcs, [(f, h) for f, h in got if h]


def report_outside(t):
    """Prints the tests and other code that include src/; returns
    (test sources, those including src/)."""
    tsrc, reach = reaching(t, t.cfg.sets['tests'])
    headers = defaultdict(int)
    for _, hs in reach:
        for h in hs:
            headers[h] += 1
    t.p('== tests including src/ (directly or through a header of tests/): %d of %d test sources'
        % (len(reach), len(tsrc)))
    for f, hs in reach:
        t.p('  %s: %s' % (f, ' '.join(hs)))
    t.p('src/ headers by the number of test sources including them')
    for h in sorted(headers, key=lambda h: (-headers[h], h)):
        t.p('  %3d %s' % (headers[h], h))
    osrc, oreach = reaching(t, t.cfg.sets['outside'])
    t.p('other code including src/: %d of %d sources' % (len(oreach), len(osrc)))
    for f, hs in oreach:
        t.p('  %s: %s' % (f, ' '.join(hs)))
    cinc = [(f, h) for f in t.files for _, h in includes_of(t.root, f, t.fset) if h.endswith('.c')]
    t.p('sources including a .c file: %d' % len(cinc))
    for f, h in cinc:
        t.p('  %s includes %s' % (f, h))
    t.p()
    return tsrc, reach


def report_comments(t):
    hits = lint_comments(t.root, [f for f in t.files if in_set(f, t.cfg.sets['comments'])])
    kinds = defaultdict(int)
    for h in hits:
        for k in h[2].split(', '):
            kinds['missing file' if k.startswith('missing') else k] += 1
    t.p('== comments to read again: %d lines (%s)'
        % (len(hits), ', '.join('%s %d' % (k, kinds[k]) for k in sorted(kinds))))
    for f, line, tag, text in hits:
        t.p('  %s:%d [%s] %s' % (f, line, tag, text[:110]))
    t.p()
    return hits


def report_notes(t):
    """Each folder of a layer says in its README.md, on a paragraph that
    starts with "May include:", the paths of the layers below it, in the
    order of the config ("no other folder" for the lowest). Returns the
    folders whose note is missing or differs."""
    cfg = t.cfg
    bad = []
    t.p('== folder notes (README.md, "May include:")')
    for p, k in cfg.paths:
        if not p.endswith('/'):
            continue
        want = [q for q, i in cfg.paths if i < k]
        f = os.path.join(p, 'README.md')
        if f not in t.fset and not os.path.isfile(os.path.join(t.root, f)):
            bad.append(p)
            t.p('  %-22s no README.md' % p)
            continue
        got = None
        for para in read(t.root, f).split('\n\n'):
            words = para.split()
            if words[:2] == ['May', 'include:']:
                got = [w for w in words[2:] if w.startswith('src/')]
        if got != want:
            bad.append(p)
            t.p('  %-22s says %s; layers.conf: %s' % (p, 'nothing' if got is None else ' '.join(got) or '-',
                                                       ' '.join(want) or '-'))
    t.p('  %d folders, %d notes differ from layers.conf' % (sum(1 for p, _ in cfg.paths if p.endswith('/')),
                                                            len(bad)))
    t.p()
    return bad


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--source', default=os.path.dirname(here), help='source tree (default: this repository)')
    ap.add_argument('--build', default=None, help='CMake build directory (default: SOURCE/build)')
    ap.add_argument('--config', default=None, help='layer table (default: SOURCE/scripts/layers.conf)')
    ap.add_argument('--max-lines', type=int, default=150, help='hard limit of a function (default 150)')
    ap.add_argument('--soft-lines', type=int, default=100, help='a function longer needs a reason (default 100)')
    ap.add_argument('--max-back', type=int, default=8, help='arrows allowed to run back up (default 8)')
    ap.add_argument('--max-spanning', type=int, default=0,
                    help='circles allowed to span two folders (default 0)')
    ap.add_argument('--max-tests', type=int, default=None,
                    help='test sources allowed to include src/ (default: not checked)')
    ap.add_argument('--max-unexplained', type=int, default=None,
                    help='functions over --soft-lines allowed without a reason (default: not checked)')
    ap.add_argument('--max-comments', type=int, default=None,
                    help='flagged comment lines allowed (default: not checked)')
    ap.add_argument('--explain', action='store_true', help='list every arrow with the includes and symbols carrying it')
    ap.add_argument('--check', action='store_true', help='exit 1 when a limit is exceeded')
    return ap.parse_args()


def main():
    a = parse_args()
    root = os.path.abspath(a.source)
    build = os.path.abspath(a.build or os.path.join(root, 'build'))
    cfg = read_config(a.config or os.path.join(root, 'scripts', 'layers.conf'))
    if not os.path.isdir(build):
        die('%s is not a build directory' % build)
    t = Tree(root, build, cfg)
    unassigned = report_layers(t)
    back = report_arrows(t, a.explain)
    comps, spanning = report_circles(t)
    funcs, over = report_functions(t, a.soft_lines, a.max_lines)
    tsrc, reach = report_outside(t)
    hits = report_comments(t)
    notes = report_notes(t)
    fails = []
    if len(spanning) > a.max_spanning:
        fails.append('%d circle(s) span two folders (at most %d)' % (len(spanning), a.max_spanning))
    if len(back) > a.max_back:
        fails.append('%d arrows run back up (at most %d)' % (len(back), a.max_back))
    if over:
        fails.append('%d function(s) over %d lines' % (len(over), a.max_lines))
    if a.max_tests is not None and len(reach) > a.max_tests:
        fails.append('%d test sources include src/ (at most %d)' % (len(reach), a.max_tests))
    unexplained = sum(1 for x in funcs if not x[4])
    if a.max_unexplained is not None and unexplained > a.max_unexplained:
        fails.append('%d function(s) over %d lines without a reason (at most %d)'
                     % (unexplained, a.soft_lines, a.max_unexplained))
    if a.max_comments is not None and len(hits) > a.max_comments:
        fails.append('%d comment lines flagged (at most %d)' % (len(hits), a.max_comments))
    if unassigned:
        fails.append('%d file(s) without a layer' % len(unassigned))
    if notes:
        fails.append('%d folder note(s) (README.md) missing or not as layers.conf' % len(notes))
    t.p('== summary: %d arrows, %d back up; %d circles (%d span folders); '
        '%d functions > %d lines, %d > %d; %d of %d tests include src/; %d comment lines flagged'
        % (len(t.arrows), len(back), len(comps), len(spanning), len(over), a.max_lines,
           len(funcs), a.soft_lines, len(reach), len(tsrc), len(hits)))
    t.p('limits: ' + ('; '.join(fails) if fails else 'all met'))
    sys.stdout.write('\n'.join(t.out) + '\n')
    if a.check and fails:
        sys.exit(1)


if __name__ == '__main__':
    main()
