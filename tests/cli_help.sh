#!/bin/sh
# cli_help.sh HSDR: issue 20's "Done when": every command that `hsdr --help` lists answers `hsdr CMD --help` with
# exit 0 and its usage on stdout (nothing on stderr); `hsdr help CMD` prints the same. Prints what differs.
set -u
hsdr=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$hsdr" --help >"$tmp/overview" || { echo "hsdr --help: exit $?"; exit 1; }
commands=$(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\).*/\1/p' "$tmp/overview")
[ -n "$commands" ] || { echo "hsdr --help lists no command"; exit 1; }
fail=0 n=0
for c in $commands; do
    n=$((n + 1))
    "$hsdr" "$c" --help >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { echo "hsdr $c --help: exit $rc"; fail=1; }
    [ -s "$tmp/err" ] && { echo "hsdr $c --help: stderr: $(head -n 2 "$tmp/err")"; fail=1; }
    head -n 1 "$tmp/out" | grep -q "^usage: hsdr $c" || { echo "hsdr $c --help: first line is not its usage"; fail=1; }
    "$hsdr" "$c" -h >"$tmp/short" 2>&1 && cmp -s "$tmp/out" "$tmp/short" || { echo "hsdr $c -h differs"; fail=1; }
    "$hsdr" help "$c" >"$tmp/help" 2>&1 && cmp -s "$tmp/out" "$tmp/help" || { echo "hsdr help $c differs"; fail=1; }
done
[ $fail -eq 0 ] && echo "cli_help: $n commands answer --help"
exit $fail
