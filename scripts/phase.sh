#!/usr/bin/env bash
# phase.sh NAME COMMAND...: runs COMMAND as one phase of a long make target
# (make test), with a line naming the phase before it and one with its time
# after, so that a run that prints nothing for minutes still says where it
# is and what took the time. The CPU time (user + system, of every process
# the phase ran) beside the wall time says whether a phase kept both cores
# busy or waited. The command's exit status is the script's.
name=$1
shift
printf '==> %s\n' "$name"
start=$(date +%s)
"$@"
status=$?
end=$(date +%s)
# The second line of `times` is the children's user and system time, as
# "XmY.YYYs XmY.YYYs", written to a file: a pipe would run it in a subshell,
# which has no children of its own.
times_file=$(mktemp)
times > "$times_file"
cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); sub("s", "", t[2]); n += t[1] * 60 + t[2] } printf "%d", n + 0.5 }' "$times_file")
rm -f "$times_file"
if [ "$status" -eq 0 ]; then
  printf '<== %s: %ds (cpu %ds)\n' "$name" "$((end - start))" "$cpu"
else
  printf '<== %s: FAILED (exit %d) after %ds (cpu %ds)\n' "$name" "$status" "$((end - start))" "$cpu"
fi
exit "$status"
