#!/usr/bin/env bash
# phase.sh NAME COMMAND...: runs COMMAND as one phase of a long make target
# (make test), with a line naming the phase before it and one with its time
# after, so that a run still says where it is and what took the time. The
# CPU time (user + system, of every process the phase ran) beside the wall
# time says whether a phase kept both cores busy or waited. The command's
# exit status is the script's.
#
# While the command prints nothing, a line every PHASE_PROGRESS_SECONDS (20)
# says that it is still running, with its time and CPU so far: a cold
# `make test` never goes 30 s without a line (make test-fresh checks that).
# For that the command's output (stdout and stderr, as one stream) passes
# through this script, line by line.
name=$1
shift
every=${PHASE_PROGRESS_SECONDS:-20}

# now is the time in microseconds ($EPOCHREALTIME, whose decimal point
# follows the locale).
now() { local t=${EPOCHREALTIME//[.,]/}; printf '%s' "$((10#$t))"; }

# tree_cpu prints the CPU seconds (user + system) that the process $1 and
# every process under it have used so far, including their children already
# waited for; nothing where there is no /proc.
tree_cpu() {
  local root=$1 f line pid p total=0 IFS=$' \t\n'
  local -A parent=() used=()
  [[ -r /proc/self/stat ]] || return 0
  for f in /proc/[0-9]*/stat; do
    { read -r line < "$f"; } 2>/dev/null || continue
    pid=${line%% *}
    # After "pid (comm) " (comm may hold spaces) come the fields from the
    # 3rd: the 4th is the parent, the 14th to 17th utime, stime, cutime and
    # cstime in clock ticks.
    set -- ${line##*) }
    parent[$pid]=$2
    used[$pid]=$((${12} + ${13} + ${14} + ${15}))
  done
  for pid in "${!used[@]}"; do
    p=$pid
    while [[ -n $p && $p != 0 ]]; do
      if [[ $p == "$root" ]]; then
        total=$((total + used[$pid]))
        break
      fi
      p=${parent[$p]:-}
    done
  done
  printf '%d' "$(((total + hz / 2) / hz))"
}

# running says whether process $1 has not yet exited (a process that has
# exited stays a zombie until it is waited for).
running() {
  local line
  if [[ -r /proc/self/stat ]]; then
    { read -r line < "/proc/$1/stat"; } 2>/dev/null || return 1
    line=${line##*) }
    [[ ${line%% *} != Z ]]
  else
    kill -0 "$1" 2>/dev/null
  fi
}

# Clock ticks a second, for /proc's times.
hz=$(getconf CLK_TCK 2>/dev/null) || hz=100

printf '==> %s\n' "$name"
start=$EPOCHSECONDS
exec 3< <(exec "$@" 2>&1)
pid=$!
quiet_since=$(now)
midline=0
while :; do
  if IFS= read -r -t 1 line <&3; then
    printf '%s\n' "$line"
    midline=0
    quiet_since=$(now)
    continue
  elif (($? <= 128)); then
    # The end of the output, perhaps after a last line with no newline
    # (given one, so that the closing line starts a line).
    if [[ -n $line ]]; then
      printf '%s\n' "$line"
    elif ((midline)); then
      printf '\n'
    fi
    break
  fi
  # A second without a whole line: print what came of one.
  if [[ -n $line ]]; then
    printf '%s' "$line"
    midline=1
    quiet_since=$(now)
  fi
  # The command has exited but something it started still holds the
  # output open: the phase is over all the same.
  running "$pid" || break
  if (($(now) - quiet_since >= every * 1000000)); then
    ((midline)) && printf '\n'
    midline=0
    cpu=$(tree_cpu "$pid")
    printf '… %s: still running, %ds%s\n' "$name" "$((EPOCHSECONDS - start))" "${cpu:+ (cpu ${cpu}s)}"
    quiet_since=$(now)
  fi
done
exec 3<&-
wait "$pid"
status=$?
end=$EPOCHSECONDS

# The second line of `times` is the children's user and system time, as
# "XmY.YYYs XmY.YYYs" (the decimal point as the locale has it), written to
# a file: a pipe would run it in a subshell, which has no children of its own.
times_file=$(mktemp)
times > "$times_file"
{ read -r _; read -r user system; } < "$times_file"
rm -f "$times_file"
ms=0
for t in "$user" "$system"; do
  if [[ $t =~ ^([0-9]+)m([0-9]+)[.,]([0-9]{3})s$ ]]; then
    ms=$((ms + 10#${BASH_REMATCH[1]} * 60000 + 10#${BASH_REMATCH[2]} * 1000 + 10#${BASH_REMATCH[3]}))
  fi
done
cpu=$(((ms + 500) / 1000))
if [ "$status" -eq 0 ]; then
  printf '<== %s: %ds (cpu %ds)\n' "$name" "$((end - start))" "$cpu"
else
  printf '<== %s: FAILED (exit %d) after %ds (cpu %ds)\n' "$name" "$status" "$((end - start))" "$cpu"
fi
exit "$status"
