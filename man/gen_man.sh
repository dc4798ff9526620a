#!/bin/bash
# Writes the man pages from the one source each has, at build time (man/CMakeLists.txt):
#   trainfit.1        every command and option from `trainfit --help` and `trainfit CMD --help`
#                     (the program_options descriptions), the request options once (the
#                     groups `trainfit --help-man request-groups` names), framed by trainfit.1.in;
#   spank_trainfit.8  the --llm-* options from `trainfit --help-man llm-options` (the table
#                     the SPANK plugin registers), framed by spank_trainfit.8.in;
#   trainfit.conf.5   copied (its keys are checked against the parser by tests/man_test.sh).
# usage: gen_man.sh TRAINFIT SRCDIR OUTDIR
set -euo pipefail
# One line per option (help_group: $COLUMNS): the man page wraps the text itself, and no word is split.
export COLUMNS=100000
T=$1 SRC=$2 OUT=$3
mkdir -p "$OUT"
version=$("$T" --version | awk '{print $2}')

# Plain text -> roff text: backslashes, leading dots/quotes, hyphens in flags.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# One command's --help (boost::program_options layout) -> .TP entries. MODE "skip": without
# the request options' groups (GROUPS, captions joined by "|"), with a pointer to them when
# the command has them; MODE "only": those groups alone.
options_roff() {
  sed -e 's/\\/\\e/g' -e 's/ *$//' | awk -v mode="$1" -v groups="$2" '
    BEGIN { n = split(groups, g, "|"); for (i = 1; i <= n; i++) shared[g[i]] = 1; show = (mode == "skip") }
    function text(t) { return (t ~ /^[.'\'']/) ? "\\&" t : t }
    function flush() {
      if (spec == "") return
      gsub(/-/, "\\-", spec)
      if (show) printf ".TP\n.B %s\n%s\n", spec, text(desc)
      spec = ""; desc = ""
    }
    /^usage:/ { next }
    /^[^ ].*:$/ {
      flush(); sub(/:$/, "")
      if ($0 in shared) had = 1
      show = (mode == "skip") != ($0 in shared)
      if (show) printf ".PP\n\\fI%s:\\fR\n", $0
      next
    }
    /^  -/ {
      flush()
      line = substr($0, 3)
      # the option spec ends at the first run of two spaces (or the end of the line)
      n = match(line, /  +/)
      if (n > 0) { spec = substr(line, 1, n - 1); desc = substr(line, n + RLENGTH) }
      else { spec = line; desc = "" }
      next
    }
    /^   +[^ ]/ { t = $0; sub(/^ +/, "", t); desc = (desc == "" ? t : desc " " t); next }
    /^$/ { flush(); next }
    { flush(); if (show) print text($0) }
    END {
      flush()
      if (mode == "skip" && had) printf ".PP\nAnd the request options: see \\fBREQUEST OPTIONS\\fR.\n"
    }
  '
}

groups=$("$T" --help-man request-groups | paste -sd '|')
commands=$("$T" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
{
  sed -e "s/@VERSION@/$version/g" "$SRC/trainfit.1.in" | sed '/@COMMANDS@/,$d'
  for c in $commands; do
    summary=$("$T" --help | awk -v c="$c" '$1 == c {sub(/^  [a-z-]+ +/, ""); print; exit}')
    printf '.SS "trainfit %s"\n' "$c"
    printf '%s\n' "$summary" | esc
    "$T" "$c" --help | options_roff skip "$groups"
  done
  printf '.SH "REQUEST OPTIONS"\n'
  printf 'The options of every command that takes a request (estimate, min\\-gpus, sweep, plot,\n'
  printf 'policy): one per request field, as \\fBtrainfit fields\\fR lists them.\n'
  "$T" estimate --help | options_roff only "$groups"
  sed -e "s/@VERSION@/$version/g" "$SRC/trainfit.1.in" | sed '1,/@COMMANDS@/d'
} >"$OUT/trainfit.1"

{
  sed -e "s/@VERSION@/$version/g" "$SRC/spank_trainfit.8.in" | sed '/@OPTIONS@/,$d'
  "$T" --help-man llm-options
  sed -e "s/@VERSION@/$version/g" "$SRC/spank_trainfit.8.in" | sed '1,/@OPTIONS@/d'
} >"$OUT/spank_trainfit.8"

sed -e "s/@VERSION@/$version/g" "$SRC/trainfit.conf.5.in" >"$OUT/trainfit.conf.5"
