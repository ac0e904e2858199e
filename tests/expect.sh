#!/bin/sh
# expect.sh WANT_RC REGEX [REGEX2] -- COMMAND...: run COMMAND, require exit status WANT_RC and output (stdout +
# stderr) matching every extended REGEX. Prints the output when it does not.
want=$1; shift
patterns=""
while [ "$1" != "--" ]; do
    patterns="$patterns$1
"
    shift
done
shift
out=$("$@" 2>&1)
rc=$?
ok=1
[ "$rc" -eq "$want" ] || { echo "expected exit $want, got $rc"; ok=0; }
printf '%s' "$patterns" | while IFS= read -r p; do
    [ -z "$p" ] && continue
    printf '%s\n' "$out" | grep -Eq -- "$p" || { echo "output lacks /$p/"; exit 1; }
done || ok=0
if [ $ok -ne 1 ]; then
    printf '%s\n' "--- output of: $*" "$out" | tail -n 40
    exit 1
fi
exit 0
