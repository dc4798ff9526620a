#!/usr/bin/env python3
"""No word of `trainfit CMD --help` or of the man pages is cut at a line end (issue 36, point 7).

The words are the program's own: every option's text as `trainfit CMD --help` prints it one line
per option (COLUMNS=100000), the request fields' names, flags and accepted values
(`trainfit fields --format json`) and the man pages' sources. Each line end of the help wrapped at
80 and 60 columns and of the rendered man pages (MANWIDTH=80) is read: when the last word of a line
and the first of the next join into one of those words, and either part alone is not one, a word
was split (boost's wrapping of a word longer than its column, groff's hyphenation). A hyphen that
groff added at the cut is read as part of the split; a break right after a separator the word
holds (- | , / _ . : =) is where a long word may break, and passes.

  /usr/bin/python3 tests/help_words_test.py build/cli/trainfit build/man man
"""
import json
import os
import re
import subprocess
import sys

PUNCT = "\"'`,;:()[]{}<>"
SEPARATORS = "-|,/_.:="


def words(text):
    return [w.strip(PUNCT) for w in text.split() if w.strip(PUNCT)]


def run(trainfit, args, columns):
    env = dict(os.environ, COLUMNS=str(columns))
    return subprocess.run([trainfit] + args, capture_output=True, text=True, env=env, timeout=30).stdout


def commands(trainfit):
    out, on = [], False
    for line in run(trainfit, ["--help"], 100000).splitlines():
        if line.startswith("commands:"):
            on = True
        elif on and re.match(r"^  [a-z]", line):
            out.append(line.split()[0])
        elif on and not line.strip():
            break
    return out


def vocabulary(trainfit, cmds, sources):
    vocab = set(words(run(trainfit, ["--help"], 100000)))
    for c in cmds:
        vocab |= set(words(run(trainfit, [c, "--help"], 100000)))
    for field in json.loads(run(trainfit, ["fields", "--format", "json"], 100000)):
        vocab |= {field["name"], field["flag"]} | set(words(field["accepted"])) | set(field["accepted"].split("|"))
    for path in sources:
        with open(path, encoding="utf-8") as f:
            vocab |= set(words(re.sub(r"\\f[BIRP]|\\-|\\&|\\e", lambda m: "-" if m.group(0) == "\\-" else "", f.read())))
    return vocab


def splits(text, vocab, where):
    """Line ends where one word of vocab was cut in two."""
    found = []
    lines = [words(line) for line in text.splitlines()]
    for i in range(len(lines) - 1):
        if not lines[i] or not lines[i + 1]:
            continue
        a, b = lines[i][-1], lines[i + 1][0]
        if a.endswith(tuple(SEPARATORS)):
            continue  # a break after a separator, where groff and the help's wrapper may break a long word
        joined = [a + b]
        if a.endswith("\u2010"):
            joined.append(a[:-1] + b)  # groff's own hyphen (hyphenation)
        for whole in joined:
            if whole in vocab and (a not in vocab or b not in vocab):
                found.append(f"{where}: line {i + 1}: '{a}' + '{b}' is '{whole}' cut in two")
    return found


def main():
    trainfit, man_built, man_src = sys.argv[1:4]
    cmds = commands(trainfit)
    if len(cmds) < 5:
        print(f"FAIL: read only {len(cmds)} commands from 'trainfit --help'")
        return 1
    sources = [os.path.join(man_src, f) for f in sorted(os.listdir(man_src)) if f.endswith(".in")]
    vocab = vocabulary(trainfit, cmds, sources)
    problems, checked = [], 0
    for columns in (80, 60):
        problems += splits(run(trainfit, ["--help"], columns), vocab, f"trainfit --help at {columns}")
        for c in cmds:
            problems += splits(run(trainfit, [c, "--help"], columns), vocab, f"trainfit {c} --help at {columns}")
            checked += 1
    for page in sorted(os.listdir(man_built)):
        if not re.search(r"\.[158]$", page):
            continue
        env = dict(os.environ, MANWIDTH="80")
        text = subprocess.run(["man", "-l", os.path.join(man_built, page)], capture_output=True, text=True, env=env,
                              timeout=60).stdout
        problems += splits(text, vocab, page)
        checked += 1
    for p in problems:
        print("FAIL " + p)
    print(f"{checked} texts read against {len(vocab)} words: {len(problems)} split")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
