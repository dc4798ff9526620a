# Timed stages with a table at the end, for scripts/test.sh and tests/slurm/in_release.sh.
# Source it; then `stage NAME COMMAND...` runs and times a command (its exit status is
# returned and remembered), `stage_table` prints one line per stage, and `stages_failed`
# lists the names of those that failed.
stage_lines=() stages_failed=()
stage() {
  local name=$1 start=$SECONDS rc
  shift
  echo "==== $name"
  "$@"
  rc=$?
  stage_lines+=("$(printf '%-52s %6d s  %s' "$name" $((SECONDS - start)) "$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)")")")
  ((rc == 0)) || stages_failed+=("$name")
  return $rc
}
stage_table() {
  echo "==== stages${1:+ ($1)}"
  printf '%s\n' "${stage_lines[@]}"
  printf '%-52s %6d s\n' "total" "$SECONDS"
  ((${#stages_failed[@]} == 0)) || echo "failed: ${stages_failed[*]}"
}
