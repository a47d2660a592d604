#!/usr/bin/env bash
# make test-loaded: COMMAND (make test) with a CPU hog on every online CPU but one (at least one
# hog) beside it, as on a shared 2-core machine, so that a test which passes only on an idle
# machine (a time bound, a race) fails here rather than on someone's fresh clone (issue 49).
# The hogs (`yes > /dev/null`) are started by this script, and it stops them by their process ids
# when COMMAND ends, passes or fails, and when it is interrupted. Prints COMMAND's wall time.
#
# Usage: Scripts/test-loaded.sh COMMAND [ARGUMENT...]
set -uo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGUMENT...]" >&2
  exit 2
fi
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 2)
count=$((cpus > 1 ? cpus - 1 : 1))
hogs=()
command=""
stop() {
  if [ ${#hogs[@]} -gt 0 ]; then
    kill "${hogs[@]}" 2>/dev/null
    wait "${hogs[@]}" 2>/dev/null
    hogs=()
  fi
}
# Interrupted: COMMAND is told too (Ctrl-C reaches it anyway, with the terminal's group).
# shellcheck disable=SC2317  # called by the traps below
interrupted() {
  [ -n "$command" ] && kill "-$1" "$command" 2>/dev/null
  stop
  exit $((128 + $2))
}
trap stop EXIT
trap 'interrupted INT 2' INT
trap 'interrupted TERM 15' TERM
for _ in $(seq "$count"); do
  yes > /dev/null &
  hogs+=("$!")
done
echo "test-loaded: $count CPU hog(s) beside '$*' on $cpus CPU(s) (pids ${hogs[*]})"
start=$(date +%s)
# In the background, so that a signal's trap runs at once (bash runs it only after a foreground
# command ends); standard input stays the script's own.
"$@" <&0 &
command=$!
wait "$command"
status=$?
command=""
end=$(date +%s)
stop
echo "test-loaded: '$*' exited $status after $((end - start)) s with $count CPU hog(s) beside it"
exit "$status"
