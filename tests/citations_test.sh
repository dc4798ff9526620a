#!/usr/bin/env bash
# Code, docs and data cite only what is in this repository or public: no tracked file points
# into the notes the project was started from (../shared/notes, ../shared/seed, ../shared/fixtures),
# which a reader of the repository does not have.
set -u
cd "$(dirname "$0")/.."
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "FAIL $(pwd) is not a git checkout (the test reads the tracked files)"; exit 1; }
hits=$(git ls-files -z | xargs -0 grep -nIE 'shared/(notes|seed|fixtures)|memory-model\.md|\bnotes (section )?[0-9]' -- 2>/dev/null |
       grep -v '^tests/citations_test.sh:')
if [[ -n $hits ]]; then
  echo "FAIL files cite notes outside the repository:"
  echo "$hits" | head -20
  exit 1
fi
echo "ok   no tracked file cites ../shared ($(git ls-files | wc -l) files)"
