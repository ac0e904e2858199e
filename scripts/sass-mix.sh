#!/bin/sh
# sass-mix.sh BINARY [REGEX]: the static SASS opcode mix of each kernel in BINARY whose mangled name matches REGEX
# (default: the mat-vec kernels, "_rows"), most frequent first, with the total; needs cuobjdump (CUDA toolkit). The
# static mix shows what the compiler made of a kernel's inner loop (address arithmetic, moves, predication) without a
# profiler; gpu-bench.sh prints it for the Q8_1 mat-vecs (the fork's and ours).
set -eu
bin=${1:?usage: sass-mix.sh BINARY [REGEX]}
re=${2:-_rows}
command -v cuobjdump >/dev/null 2>&1 || { echo "sass-mix.sh: cuobjdump not found (CUDA toolkit bin/)" >&2; exit 1; }
cuobjdump -sass "$bin" | awk -v re="$re" '
    /Function :/ { f = $3; next }
    f ~ re && /^[ \t]+\/\*[0-9a-f]+\*\// {
        op = $2; if (op ~ /^@/) op = $3
        sub(/\..*/, "", op); sub(/;$/, "", op)
        n[f, op]++; tot[f]++
    }
    END {
        for (k in n) { split(k, p, SUBSEP); print p[1], n[k], p[2] }
        for (f in tot) print f, tot[f], "TOTAL"
    }' | sort -k1,1 -k2,2nr | awk '{ if ($1 != last) { print ""; print $1; last = $1 } printf "  %6d %s\n", $2, $3 }'
