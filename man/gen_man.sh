#!/bin/bash
# Writes the man pages from the one source each has, at build time (man/CMakeLists.txt):
#   trainfit.1        every command and option from `trainfit --help` and `trainfit CMD --help`
#                     (the program_options descriptions), framed by trainfit.1.in;
#   spank_trainfit.8  the --llm-* options from `trainfit --help-man llm-options` (the table
#                     the SPANK plugin registers), framed by spank_trainfit.8.in;
#   trainfit.conf.5   copied (its keys are checked against the parser by tests/man_test.sh).
# usage: gen_man.sh TRAINFIT SRCDIR OUTDIR
set -euo pipefail
T=$1 SRC=$2 OUT=$3
mkdir -p "$OUT"
version=$("$T" --version | awk '{print $2}')

# Plain text -> roff text: backslashes, leading dots/quotes, hyphens in flags.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# One command's --help (boost::program_options layout) -> .TP entries.
options_roff() {
  sed -e 's/\\/\\e/g' -e 's/ *$//' | awk '
    function text(t) { return (t ~ /^[.'\'']/) ? "\\&" t : t }
    function flush() {
      if (spec == "") return
      gsub(/-/, "\\-", spec)
      printf ".TP\n.B %s\n%s\n", spec, text(desc)
      spec = ""; desc = ""
    }
    /^usage:/ { next }
    /^[^ ].*:$/ { flush(); sub(/:$/, ""); printf ".PP\n\\fI%s:\\fR\n", $0; next }
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
    { flush(); print text($0) }
    END { flush() }
  '
}

commands=$("$T" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
{
  sed -e "s/@VERSION@/$version/g" "$SRC/trainfit.1.in" | sed '/@COMMANDS@/,$d'
  for c in $commands; do
    summary=$("$T" --help | awk -v c="$c" '$1 == c {sub(/^  [a-z-]+ +/, ""); print; exit}')
    printf '.SS "trainfit %s"\n' "$c"
    printf '%s\n' "$summary" | esc
    "$T" "$c" --help | options_roff
  done
  sed -e "s/@VERSION@/$version/g" "$SRC/trainfit.1.in" | sed '1,/@COMMANDS@/d'
} >"$OUT/trainfit.1"

{
  sed -e "s/@VERSION@/$version/g" "$SRC/spank_trainfit.8.in" | sed '/@OPTIONS@/,$d'
  "$T" --help-man llm-options
  sed -e "s/@VERSION@/$version/g" "$SRC/spank_trainfit.8.in" | sed '1,/@OPTIONS@/d'
} >"$OUT/spank_trainfit.8"

sed -e "s/@VERSION@/$version/g" "$SRC/trainfit.conf.5.in" >"$OUT/trainfit.conf.5"
