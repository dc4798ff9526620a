#!/bin/bash
# The man pages (man/): each renders without a warning (groff -ww, and man -l), trainfit(1)
# has every command and every flag the commands' --help lists, spank_trainfit(8) every
# --llm-* option, trainfit.conf(5) every key the parser knows (from its own error message).
# usage: man_test.sh TRAINFIT MANDIR
set -u
T=$1 M=$2
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
export LC_ALL=C.UTF-8 MANWIDTH=200
render() { man -l "$1" 2>/dev/null | col -b; }
for page in trainfit.1 trainfit.conf.5 spank_trainfit.8; do
  [ -s "$M/$page" ] || { bad "$page exists"; continue; }
  warnings=$(groff -ww -z -man "$M/$page" 2>&1)
  [ -z "$warnings" ] && ok "$page: groff -ww -z: no warning" || bad "$page: groff warnings: $warnings"
  warnings=$(man --warnings -l "$M/$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] && ok "$page: man -l: no warning" || bad "$page: man -l warnings: $warnings"
done

page=$(render "$M/trainfit.1")
commands=$("$T" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
[ "$(wc -w <<<"$commands")" -ge 10 ] && ok "trainfit --help lists $(wc -w <<<"$commands") commands" || bad "commands: $commands"
for c in $commands; do
  grep -q "^   trainfit $c\$" <<<"$page" && ok "trainfit(1) has 'trainfit $c'" || bad "trainfit(1) lacks 'trainfit $c'"
  missing=""
  for flag in $("$T" "$c" --help | grep -oE '^  (-[a-zA-Z] \[ )?--[a-z0-9_-]+' | grep -oE -- '--[a-z0-9_-]+'); do
    grep -qF -- "$flag" <<<"$page" || missing="$missing $flag"
  done
  [ -z "$missing" ] && ok "trainfit(1) has every flag of 'trainfit $c --help'" || bad "trainfit(1) lacks$missing ($c)"
done
n=$("$T" estimate --help | grep -cE '^  (-[a-zA-Z] \[ )?--')
[ "$n" -ge 40 ] && ok "estimate --help has $n flags" || bad "estimate --help has only $n flags"
grep -qF -- "--catalog-dir" <<<"$page" && ok "trainfit(1) has --catalog-dir" || bad "trainfit(1) lacks --catalog-dir"
# The request options once (REQUEST OPTIONS), not once per command; no repository paths.
# A tag sits at the sections' body indent, which groff changed (7 columns up to 1.23, 5 in
# 1.24): read it from the page, the line under NAME.
indent=$(awk '/^NAME$/ {getline; match($0, /^ */); print RLENGTH; exit}' <<<"$page")
[ "${indent:-0}" -gt 0 ] && ok "trainfit(1)'s body indent is $indent columns" || bad "trainfit(1) has no NAME section body"
for flag in $("$T" fields --format json | grep -oE '"flag": *"--[a-z0-9-]+"' | grep -oE -- '--[a-z0-9-]+'); do
  n=$(grep -cE -- "^ {${indent:-7}}$flag( |$)" <<<"$page")
  [ "$n" -eq 1 ] || bad "trainfit(1) lists $flag $n times, wanted once"
done
ok "trainfit(1) lists each request field's flag once"
# Bounded: the commands' text plus about five lines per request field (each modelled convention is
# a field, so the page grows with them and with nothing else).
lines=$(MANWIDTH=80 man -l "$M/trainfit.1" 2>/dev/null | wc -l)
fields=$("$T" fields --format json | grep -cE '"flag": *"--')
bound=$((250 + 5 * fields))
[ "$lines" -le "$bound" ] && ok "trainfit(1) is $lines lines at 80 columns" || bad "trainfit(1) is $lines lines at 80 columns (at most $bound for $fields fields)"
paths=$(grep -oE '(^|[ (])docs/[a-z_-]+\.md' <<<"$page" | head -3)
[ -z "$paths" ] && ok "trainfit(1) names no repository path" || bad "trainfit(1) names repository paths: $paths"

page=$(render "$M/spank_trainfit.8")
for option in $("$T" --help-man llm-options | sed -n 's/^\.B \\-\\-llm\\-\([a-z\\-]*\).*/\1/p' | sed 's/\\-/-/g'); do
  grep -qF -- "--llm-$option" <<<"$page" && ok "spank_trainfit(8) has --llm-$option" || bad "spank_trainfit(8) lacks --llm-$option"
done
for arg in default_gpu= conf= catalog_dir= endpoint=; do
  grep -qF -- "$arg" <<<"$page" && ok "spank_trainfit(8) has $arg" || bad "spank_trainfit(8) lacks $arg"
done

# The keys trainfit.conf accepts, as the parser lists them in its unknown-key message.
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "no_such_key = 1" >"$W/trainfit.conf"
known=$("$T" check-config --catalog-dir "$W" "$W/trainfit.conf" 2>/dev/null | sed -n 's/.*; known: //p' | tr ',' '\n' | sed 's/^ *//')
[ "$(wc -l <<<"$known")" -ge 10 ] && ok "the parser lists $(wc -l <<<"$known") keys" || bad "keys from the parser: $known"
page=$(render "$M/trainfit.conf.5")
while read -r key; do
  grep -qF -- "$key" <<<"$page" && ok "trainfit.conf(5) has $key" || bad "trainfit.conf(5) lacks $key"
done <<<"$known"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
