#!/usr/bin/env bash
# silence-watch.sh LIMIT COMMAND...: runs COMMAND (stdout and stderr as one
# stream) and prints each line of its output with the time since the start,
# "[mm:ss] line"; fails if the output was ever silent for more than LIMIT
# seconds, naming each such silence, the phase it was in (the last
# "==> NAME" line of scripts/phase.sh not yet closed by its "<== NAME") and
# the line before it. make test-fresh runs make test under it, so that a
# cold run that leaves its user without a line for half a minute fails.
#
# Exit status: the command's when it failed, else 1 when it was silent too
# long, else 0.
set -uo pipefail
limit=$1
shift

now() { local t=${EPOCHREALTIME//[.,]/}; printf '%s' "$((10#$t))"; }

start=$(now)
last=$start
previous="(the start)"
phases=() # the phases open, innermost last
silences=()

# output TEXT: a line (or part of one) came; a silence before it longer than
# the limit is noted.
output() {
  local t gap
  t=$(now)
  gap=$((t - last))
  if ((gap > limit * 1000000)); then
    local in="no phase"
    ((${#phases[@]})) && in="phase \"${phases[-1]}\""
    silences+=("$(printf 'silent for %ds (the limit is %ds) in %s, after: %s' \
      "$(((gap + 500000) / 1000000))" "$limit" "$in" "$previous")")
    printf 'silence-watch: %s\n' "${silences[-1]}"
  fi
  last=$t
  [[ -n $1 ]] && previous=$1
}

stamp() { local s=$((($(now) - start) / 1000000)); printf '[%02d:%02d] ' "$((s / 60))" "$((s % 60))"; }

exec 3< <(exec "$@" 2>&1)
pid=$!
midline=0
while :; do
  if IFS= read -r -t 1 line <&3; then
    output "$line"
    ((midline)) || stamp
    printf '%s\n' "$line"
    midline=0
    case $line in
      "==> "*) phases+=("${line#==> }") ;;
      "<== "*) ((${#phases[@]})) && [[ ${line#<== } == "${phases[-1]}:"* ]] && unset 'phases[-1]' ;;
    esac
  elif (($? <= 128)); then
    [[ -n $line ]] && { ((midline)) || stamp; printf '%s\n' "$line"; }
    # The end: a silence up to it counts too.
    output "${line}"
    break
  elif [[ -n $line ]]; then
    # Part of a line (a progress bar's): output all the same.
    output "$line"
    ((midline)) || stamp
    printf '%s' "$line"
    midline=1
  elif ! kill -0 "$pid" 2>/dev/null || [[ $(ps -o stat= -p "$pid" 2>/dev/null) == Z* ]]; then
    # The command has exited; something it started still holds the output.
    output ""
    break
  fi
done
exec 3<&-
wait "$pid"
status=$?
if ((${#silences[@]})); then
  printf 'silence-watch: %d silence(s) longer than %ds:\n' "${#silences[@]}" "$limit"
  printf '  %s\n' "${silences[@]}"
fi
((status != 0)) && exit "$status"
((${#silences[@]} == 0))
