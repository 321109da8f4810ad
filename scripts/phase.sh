#!/usr/bin/env bash
# phase.sh NAME COMMAND...: runs COMMAND as one phase of a long make target
# (make test), with a line naming the phase before it and one with its time
# after, so that a run that prints nothing for minutes still says where it
# is and what took the time. The command's exit status is the script's.
name=$1
shift
printf '==> %s\n' "$name"
start=$(date +%s)
"$@"
status=$?
end=$(date +%s)
if [ "$status" -eq 0 ]; then
  printf '<== %s: %ds\n' "$name" "$((end - start))"
else
  printf '<== %s: FAILED (exit %d) after %ds\n' "$name" "$status" "$((end - start))"
fi
exit "$status"
