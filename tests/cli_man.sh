#!/bin/sh
# cli_man.sh HSDR MANPAGE: the man page help2man made at build time renders (man -l) and names every command of
# `hsdr --help`. Exit 77 (skipped) when the build had no help2man.
set -u
hsdr=$1 page=$2
[ -f "$page" ] || { echo "cli_man: no $page (help2man missing at build time): skipped"; exit 77; }
if command -v man >/dev/null 2>&1; then
    text=$(MANPAGER=cat MANWIDTH=200 man -l "$page" 2>&1) || { echo "man -l $page failed: $text"; exit 1; }
else
    text=$(cat "$page")
fi
fail=0
for c in $("$hsdr" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\).*/\1/p'); do
    printf '%s\n' "$text" | grep -Eq "^ +$c( |$)" || { echo "the man page lacks command $c"; fail=1; }
done
[ $fail -eq 0 ] && echo "cli_man: the man page names every command"
exit $fail
