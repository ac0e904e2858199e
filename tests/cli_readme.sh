#!/bin/sh
# cli_readme.sh HSDR README: the README's command table holds each command's synopsis as `hsdr CMD --help` prints it
# (first line, after "usage: "; '|' written \| in the table), and no row of a command the binary does not know.
set -u
hsdr=$1 readme=$2
commands=$("$hsdr" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\).*/\1/p')
fail=0
for c in $commands; do
    synopsis=$("$hsdr" "$c" --help | sed -n '1s/^usage: //p' | sed 's/|/\\|/g')
    grep -Fq -- "| \`$synopsis\` |" "$readme" || { echo "README lacks the row | \`$synopsis\` |"; fail=1; }
done
# every `hsdr ...` row of the table names a command of the binary with its current synopsis
grep -o '^| `hsdr [^`]*` |' "$readme" | while IFS= read -r row; do
    c=$(printf '%s\n' "$row" | sed 's/^| `hsdr \([a-z0-9-]*\).*/\1/')
    synopsis=$("$hsdr" "$c" --help 2>/dev/null | sed -n '1s/^usage: //p' | sed 's/|/\\|/g')
    [ "$row" = "| \`$synopsis\` |" ] || { echo "README row $row: not the synopsis of a command ($synopsis)"; exit 1; }
done || fail=1
[ $fail -eq 0 ] && echo "cli_readme: the README's command table holds every synopsis"
exit $fail
