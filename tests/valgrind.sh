#!/bin/sh
# valgrind.sh VALGRIND SUPP LOG WANT_RC -- COMMAND...: run COMMAND under Memcheck with every leak kind that can be
# ours counted as an error (definite, indirect, possible); exits 99 on any Memcheck error, else COMMAND's status
# when it is WANT_RC, else 1. The full Memcheck report goes to LOG; on errors its first 80 lines are printed too.
# Rerun a failure by hand with --track-origins=yes for where an uninitialised value came from.
vg=$1 supp=$2 log=$3 want=$4
shift 4
[ "$1" = "--" ] && shift
mkdir -p "$(dirname "$log")"
"$vg" --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --suppressions="$supp" --num-callers=30 \
    --log-file="$log" "$@"
rc=$?
if [ "$rc" -eq 99 ]; then
    echo "valgrind.sh: Memcheck found errors in: $*"
    grep -v '^==[0-9]*== *$' "$log" | head -n 80
    echo "(the whole report: $log)"
    exit 99
fi
if [ "$rc" -ne "$want" ]; then
    echo "valgrind.sh: expected exit $want, got $rc from: $*"
    exit 1
fi
echo "valgrind.sh: Memcheck clean (exit $rc): $*"
exit 0
