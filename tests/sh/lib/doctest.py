#!/usr/bin/env python3
"""doctest.py - run the commands and load the JSON examples of Markdown docs.

    python3 doctest.py --cli MBSENS --source DIR [--update] FILE.md ...

Every fenced block of a document is checked, in document order, in one
scratch directory per document (models/, tests/, examples/, docs/ and
viewer/ of DIR linked into it, `mbsens` on PATH and `build/mbsens` the
executable under test), so that a block may use the files an earlier one
wrote:

  ```sh       a shell script: every line runs (sh -e); it must succeed.
              $B is build/mbsens, as README.md sets it.
              The output is not shown in the doc, so it is not compared.
  ``` (plain) the lines starting with "$ " are commands; the lines after
              one, up to the next "$ " or the end of the block, are its
              output (standard output and standard error as they come),
              compared with what the command prints. A shown line "..."
              stands for any number of lines; wall times ("0.068 s") are
              masked. "$ echo $?" prints the previous command's status.
              Plain blocks without "$ " lines (synopses) are not run.
  ```json     a model, or a part of one: loaded with `mbsens info`; it
              must load (exit 0).
  other languages (c, cmake, python) are left to their own tests.

Markers, on the line before the fence (HTML comments, not rendered):

  <!-- doctest: skip (WHY) -->    not run; WHY is required
  <!-- doctest: numbers (WHY) -->  output compared with every number masked:
                                  the lines, names and layout must match,
                                  the figures are round-off or last digits
                                  that any change of the arithmetic moves
                                  (WHY is required)
  <!-- doctest: rtol R (WHY) -->  output compared with every number masked,
                                  then each number with its shown value to
                                  the relative tolerance R (|a - b| <= R
                                  max(|a|, |b|)): figures a solver
                                  tolerance leaves uncertain; WHY says
                                  where R comes from
  <!-- doctest: run -->           commands run, output not compared (the
                                  figures are illustrative); a command
                                  must exit 0 unless its shown output has
                                  "error:"
  <!-- doctest: json into PATH -->        a part of a model: its members
  <!-- doctest: json into PATH at KEY --> replace those of the model PATH
                                  (relative to DIR) as the earlier parts of
                                  the doc left it (the parts of one doc
                                  build on each other, as a reader would
                                  write them into one file); "at KEY": the
                                  block is one item of the array KEY
                                  ("bodies", "joints", ...), replacing the
                                  item of the same name or appended

  <!-- doctest: json file PATH -->  the block is the model file PATH
                                  (equal once parsed) and loads

and anywhere, a hidden set-up script run at that point in the scratch
directory (files a command of the doc reads, e.g. a broken model):

  <!-- doctest-setup
  printf '{\n  "name": "x",\n  "bodies": [, ]\n}\n' > broken.json
  -->

Prints one line per check ("ok: ..." / "FAILED: ...") and exits non-zero
if a check failed. --update (for the writer of a doc, never in a test):
rewrite in the file the shown output of every compared command that
differs and has no "..." line, then review the diff.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MARK = re.compile(r'^<!--\s*doctest:\s*(.*?)\s*-->\s*$')
TIME = re.compile(r'\b\d+\.\d+ s\b')
NUMBER = re.compile(r'(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])')


class Block:
    def __init__(self, lang, lines, start, marker):
        self.lang, self.lines, self.start, self.marker = lang, lines, start, marker


def parse(path):
    """Blocks and set-up scripts of a Markdown file, in order."""
    items = []
    lines = open(path, encoding='utf-8').read().split('\n')
    i, marker = 0, None
    while i < len(lines):
        line = lines[i]
        m = MARK.match(line)
        if m:
            marker = m.group(1)
            i += 1
            continue
        if line.startswith('<!-- doctest-setup'):
            j = i + 1
            while j < len(lines) and lines[j].strip() != '-->':
                j += 1
            items.append(('setup', '\n'.join(lines[i + 1:j]), i + 1))
            i = j + 1
            continue
        f = re.match(r'^(\s*)```(\S*)\s*$', line)
        if f:
            indent, lang = len(f.group(1)), f.group(2)
            j = i + 1
            while j < len(lines) and not re.match(r'^\s*```\s*$', lines[j]):
                j += 1
            body = [l[indent:] if l[:indent].strip() == '' else l for l in lines[i + 1:j]]
            items.append(('block', Block(lang, body, i + 1, marker), i + 1))
            marker = None
            i = j + 1
            continue
        if line.strip():
            marker = None
        i += 1
    return items


def normalize(text, numbers=False):
    out = []
    for l in text.split('\n'):
        l = TIME.sub('T s', l.rstrip())
        out.append(NUMBER.sub('#', l) if numbers else l)
    while out and out[-1] == '':
        out.pop()
    return out


def matches(shown, got):
    """shown: lines of the doc ("..." = any lines); got: lines printed."""
    pattern = ''
    for l in shown:
        pattern += r'(?:[^\n]*\n)*?' if l.strip() == '...' else re.escape(l) + r'\n'
    return re.fullmatch(pattern, ''.join(l + '\n' for l in got)) is not None


class Runner:
    def __init__(self, cli, source, scratch, name):
        self.cli, self.source, self.dir, self.name = cli, source, scratch, name
        self.updates = []   # (first line, number of lines, new lines), 0-based
        self.models = {}    # PATH of "json into PATH": the model as the doc's parts left it
        self.passed = self.failed = 0
        os.makedirs(os.path.join(scratch, 'bin'))
        os.makedirs(os.path.join(scratch, 'build'))
        for sub in ('models', 'tests', 'examples', 'docs', 'viewer'):
            os.symlink(os.path.join(source, sub), os.path.join(scratch, sub))
        for link in ('bin/mbsens', 'build/mbsens'):
            os.symlink(cli, os.path.join(scratch, link))
        self.env = dict(os.environ)
        self.env['PATH'] = os.path.join(scratch, 'bin') + os.pathsep + self.env.get('PATH', '')
        self.env['B'] = 'build/mbsens'   # as README.md sets it
        self.env['COLUMNS'] = '80'

    def ok(self, what):
        self.passed += 1
        print('ok: %s: %s' % (self.name, what))

    def ko(self, what, detail=''):
        self.failed += 1
        print('FAILED: %s: %s' % (self.name, what))
        for l in detail.rstrip('\n').split('\n')[:40] if detail else []:
            print('    ' + l)

    def shell(self, script, flags=()):
        p = subprocess.run(['sh', *flags, '-c', script], cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1800)
        return p.returncode, p.stdout.decode('utf-8', 'replace')

    def setup(self, script, line):
        rc, out = self.shell(script, ('-e',))
        if rc == 0:
            self.ok('line %d: set-up' % line)
        else:
            self.ko('line %d: set-up exits %d' % (line, rc), out)

    def sh_block(self, b):
        rc, out = self.shell('\n'.join(b.lines), ('-e',))
        if rc == 0:
            self.ok('line %d: sh block' % b.start)
        else:
            self.ko('line %d: sh block exits %d' % (b.start, rc), out)

    @staticmethod
    def within(want, got, rtol):
        """The numbers of got's lines against want's, to rtol (same layout)."""
        for w, g in zip(want, got):
            for a, c in zip(NUMBER.findall(w), NUMBER.findall(g)):
                a, c = float(a), float(c)
                if abs(a - c) > rtol * max(abs(a), abs(c)):
                    return False
        return True

    def commands(self, b, compare, numbers=False, rtol=None):
        cmds = []   # (line, command, shown output)
        for k, l in enumerate(b.lines):
            if l.startswith('$ '):
                cmds.append([b.start + k + 1, l[2:], []])
            elif cmds and cmds[-1][1].endswith('\\'):
                cmds[-1][1] = cmds[-1][1][:-1] + ' ' + l.strip()
            elif cmds:
                cmds[-1][2].append(l)
        last = 0
        for line, cmd, shown in cmds:
            rc, out = self.shell('(exit %d); %s' % (last, cmd))
            if cmd.strip() != 'echo $?':
                last = rc
            label = 'line %d: $ %s' % (line, cmd if len(cmd) < 70 else cmd[:67] + '...')
            if compare:
                got = normalize(out, numbers)
                want = normalize('\n'.join(shown), numbers)
                same = matches(want, got)
                if same and rtol is not None:
                    same = self.within(normalize('\n'.join(shown)), normalize(out), rtol)
                if same:
                    self.ok(label)
                else:
                    if '...' not in [l.strip() for l in shown]:
                        self.updates.append((line, len(shown), out.rstrip('\n').split('\n') if out.strip() else []))
                    self.ko(label + ': output differs',
                            'shown:\n' + '\n'.join('  ' + l for l in want) +
                            '\nprinted:\n' + '\n'.join('  ' + l for l in got))
            else:
                fails = any('error:' in l for l in shown)
                if (rc != 0) == fails or cmd.strip() == 'echo $?':
                    self.ok(label + ' (runs)')
                else:
                    self.ko(label + ': exit %d' % rc, out)

    def json_block(self, b, count):
        text = '\n'.join(b.lines)
        into = re.match(r'json into (\S+)(?: at (\w+))?$', b.marker or '')
        same = re.match(r'json file (\S+)$', b.marker or '')
        if same:
            try:
                equal = json.loads(text) == json.load(open(os.path.join(self.source, same.group(1)),
                                                           encoding='utf-8'))
            except (ValueError, OSError) as e:
                equal = False
            if equal:
                self.ok('line %d: JSON example is %s' % (b.start, same.group(1)))
            else:
                self.ko('line %d: JSON example is not %s' % (b.start, same.group(1)))
        try:
            if into:
                base = into.group(1)
                if base not in self.models:
                    self.models[base] = json.load(open(os.path.join(self.source, base), encoding='utf-8'))
                model = json.loads(json.dumps(self.models[base]))
                part = json.loads(text if into.group(2) else '{' + text + '}')
                if into.group(2):
                    items = model.setdefault(into.group(2), [])
                    names = [x.get('name') for x in items]
                    if part.get('name') in names:
                        items[names.index(part.get('name'))] = part
                    else:
                        items.append(part)
                else:
                    model.update(part)
            else:
                model = json.loads(text)
        except (ValueError, OSError) as e:
            self.ko('line %d: JSON example does not parse: %s' % (b.start, e))
            return
        path = os.path.join(self.dir, 'doc_example_%d.json' % count)
        with open(path, 'w', encoding='utf-8') as fh:
            json.dump(model, fh, indent=1)
        rc, out = self.shell('mbsens info %s' % path)
        where = ' (into %s)' % into.group(1) if into else ''
        if rc == 0 and into:
            self.models[into.group(1)] = model
        if rc == 0:
            self.ok('line %d: JSON example loads%s' % (b.start, where))
        else:
            self.ko('line %d: JSON example does not load%s' % (b.start, where), out)

    def run(self, items):
        njson = 0
        for kind, item, line in items:
            if kind == 'setup':
                self.setup(item, line)
                continue
            b = item
            marker = b.marker or ''
            if marker.startswith('skip'):
                if not re.match(r'skip \(.+\)$', marker):
                    self.ko('line %d: "doctest: skip" without its reason' % b.start)
                continue
            if b.lang == 'sh':
                self.sh_block(b)
            elif b.lang in ('', 'console', 'text') and any(l.startswith('$ ') for l in b.lines):
                if marker.startswith('numbers') and not re.match(r'numbers \(.+\)$', marker):
                    self.ko('line %d: "doctest: numbers" without its reason' % b.start)
                rtol = None
                if marker.startswith('rtol'):
                    r = re.match(r'rtol (\S+) \(.+\)$', marker)
                    if not r:
                        self.ko('line %d: "doctest: rtol R (WHY)" without its tolerance or reason' % b.start)
                    rtol = float(r.group(1)) if r else 0.0
                self.commands(b, compare=marker != 'run', numbers=marker.startswith(('numbers', 'rtol')),
                              rtol=rtol)
            elif b.lang == 'json':
                njson += 1
                self.json_block(b, njson)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('files', nargs='+')
    ap.add_argument('--update', action='store_true')
    a = ap.parse_args()
    cli, source = os.path.abspath(a.cli), os.path.abspath(a.source)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix='mbsens-doctest.') as tmp:
        for k, f in enumerate(a.files):
            name = os.path.relpath(os.path.abspath(f), source)
            r = Runner(cli, source, os.path.join(tmp, 'doc%d' % k), name)
            r.run(parse(f))
            if a.update and r.updates:
                lines = open(f, encoding='utf-8').read().split('\n')
                for first, n, new in sorted(r.updates, reverse=True):
                    lines[first:first + n] = new
                open(f, 'w', encoding='utf-8').write('\n'.join(lines))
            passed += r.passed
            failed += r.failed
    print('doctest: %d passed, %d failed' % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == '__main__':
    sys.exit(main())
