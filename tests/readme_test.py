#!/usr/bin/python3
"""README.md's package list and Layout follow the repository.

    /usr/bin/python3 tests/readme_test.py

- The packages named (in backticks) in the paragraph that starts "`scripts/install-deps.sh`
  installs" are exactly the words of the script's packages=( ... ) array.
- Every path of the Layout block (its lines' first words ending in "/") is a directory, and
  every directory git tracks at the top level and one level down holds a listed path.
"""
import os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def script_packages():
    text = open(os.path.join(ROOT, "scripts", "install-deps.sh")).read()
    body = re.search(r"^packages=\((.*?)\)", text, re.S | re.M).group(1)
    return set(body.split())


def readme_packages(readme):
    start = readme.index("`scripts/install-deps.sh` installs")
    paragraph = readme[start:readme.index("\n\n", start)]
    return set(re.findall(r"`([a-z0-9][a-z0-9.+-]*)`", paragraph))


def layout_paths(readme):
    block = readme[readme.index("## Layout\n"):]
    paths = set()
    for line in block.splitlines():
        m = re.match(r"^    (\S+/)(?:\s|$)", line)
        if m:
            paths.add(m.group(1).rstrip("/"))
    return paths


def tracked_dirs():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        sys.exit("readme_test: %s is not a git checkout (it reads the tracked tree): %s" % (ROOT, listed.stderr.strip()))
    files = listed.stdout.split()
    dirs = set()
    for f in files:
        parts = f.split("/")
        if parts[0].startswith("."):
            continue
        if len(parts) > 1:
            dirs.add(parts[0])
        if len(parts) > 2 and parts[0] in ("lib", "tests", "packaging", "conf", "cli", "plugin"):
            dirs.add("/".join(parts[:2]))
    return dirs


def main():
    readme = open(os.path.join(ROOT, "README.md")).read()
    failures = []
    script, listed = script_packages(), readme_packages(readme)
    if script - listed:
        failures.append("README does not name: " + " ".join(sorted(script - listed)))
    if listed - script:
        failures.append("README names packages install-deps.sh does not install: " + " ".join(sorted(listed - script)))
    paths = layout_paths(readme)
    for p in sorted(paths):
        if not os.path.isdir(os.path.join(ROOT, p)):
            failures.append("Layout lists %s/, which is not a directory" % p)
    for d in sorted(tracked_dirs() - paths):
        failures.append("Layout does not list %s/" % d)
    for f in failures:
        print("FAIL " + f)
    print("readme_test: %d packages, %d layout paths, %d failure(s)" % (len(script), len(paths), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
