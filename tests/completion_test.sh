#!/bin/bash
# Bash completion (completions/trainfit.bash), sourced in bash and called as bash calls it,
# with COMP_WORDS/COMP_CWORD. Expectations from elsewhere: the site catalog written here
# (a GPU and a model that exist only there), `trainfit fields` for accepted values.
# usage: completion_test.sh TRAINFIT COMPLETION_SCRIPT
set -u
T=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
source "$2"
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/site/gpus.d" "$W/site/models.d"
echo '{"gpus": [{"name": "zz-a40", "capacity_bytes": 48305799168}]}' >"$W/site/gpus.d/10.json"
echo '{"models": [{"name": "zz-acme-13b", "layers": 40, "hidden": 5120, "heads": 40, "ffn": 13824, "vocab": 64000}]}' >"$W/site/models.d/10.json"

# complete WORD... : the line up to the cursor, last word = the one being completed.
complete_line() {
  COMP_WORDS=("$T" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _trainfit
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() {  # name, expected (sorted, space-separated), words...
  local name=$1 want=$2
  shift 2
  local got
  got=$(complete_line "$@" | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$want" ] && ok "$name" || bad "$name: got '$got', expected '$want'"
}
has() {  # name, word, words...
  local name=$1 word=$2
  shift 2
  complete_line "$@" | grep -qxF -- "$word" && ok "$name" || bad "$name: '$word' not offered"
}

expect "commands by prefix" "min-gpus models" m
expect "check-config is a command" "check-config" che
expect "global flags" "--catalog-dir" --cat
has "every command from --help" estimate ""
expect "--gpu: site GPU with --catalog-dir" "zz-a40" --catalog-dir "$W/site" estimate --gpu zz
expect "--gpu: site GPU with --catalog-dir=DIR after the command" "zz-a40" estimate --catalog-dir="$W/site" --gpu zz
expect "--gpu: not without the site catalog" "" --catalog-dir "$W/absent-not" estimate --gpu zz
TRAINFIT_CATALOG_DIR="$W/site" expect "--gpu: TRAINFIT_CATALOG_DIR" "zz-a40" estimate --gpu zz
expect "--model: site model" "zz-acme-13b" --catalog-dir "$W/site" estimate --model zz-
expect "--model=: site model" "--model=zz-acme-13b" --catalog-dir "$W/site" estimate --model=zz
has "--gpu: built-in h100" h100 estimate --gpu h1
expect "policy --models: comma list" "llama3-8b,llama3-70b" policy --models llama3-8b,llama3-7

# Accepted values, against `trainfit fields`.
for field in recompute sharding zero_stage; do
  line=$("$T" fields | grep -F "| \`$field\` |")
  # "| `recompute` | `--recompute` | none|selective|full|op | meaning |": columns split on " | "
  flag=$(awk -F' [|] ' '{ print $2 }' <<<"$line" | tr -d '`')
  want=$(awk -F' [|] ' '{ print $3 }' <<<"$line" | tr '|' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
  expect "$flag values = trainfit fields' accepted ($want)" "$want" estimate "$flag" ""
done
# Every field whose accepted values start with a list ("a|b|c", "a|b, or ...") completes that
# list, from `trainfit fields` (the field table the code parses with).
while IFS=$'\t' read -r flag list; do
  want=$(tr '|' '\n' <<<"$list" | sort | tr '\n' ' ' | sed 's/ $//')
  expect "$flag completes its accepted values ($want)" "$want" estimate "$flag" ""
done < <("$T" fields --format json | /usr/bin/python3 -c '
import json, re, sys
for f in json.load(sys.stdin):
    m = re.match(r"([a-z0-9_.-]+(\|[a-z0-9_.-]+)+)(,|$)", f["accepted"])
    if m: print(f["flag"] + "\t" + m.group(1))')
# Other commands' enumerations: the values their own errors accept.
accepted() { "$T" "$@" 2>&1 | sed -n 's/.*accepted: \([a-z|-]*\).*/\1/p' | tr '|' '\n' | sort | tr '\n' ' ' | sed 's/ $//'; }
expect "report --format: every format" "$(accepted report --audit /dev/null --format xml)" report --format ""
expect "report --format=: by prefix" "--format=prometheus" report --format=pro
expect "estimate --endpoint-fallback" "$(accepted estimate --model llama3-8b --endpoint http://127.0.0.1:9 --endpoint-fallback maybe)" \
  estimate --endpoint-fallback ""
expect "plot --chart" "$(accepted plot --model llama3-8b --out - --chart pie)" plot --chart ""
expect "--format values (estimate)" "csv json table" estimate --format ""
expect "--format values (models)" "json table" models --format ""
has "flags of estimate" --recompute estimate --rec
has "flags after a switch (--help takes no value)" --seq estimate --help --se
has "--catalog-dir offered after a command" --catalog-dir estimate --catalog
expect "a free value offers nothing" "" estimate --seq ""
mkdir "$W/confdir"
expect "--catalog-dir completes folders" "$W/confdir" --catalog-dir "$W/conf"
touch "$W/job.json"
expect "--request completes files" "$W/job.json" estimate --request "$W/job"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
