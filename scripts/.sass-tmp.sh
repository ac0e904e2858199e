#!/bin/sh
# opcode histogram of each matvec kernel's SASS
b=build-gpu/hsdr
cuobjdump -sass $b > $OUT/all.sass 2>&1 || { echo no cuobjdump; exit 1; }
awk '/Function :/ {f=$3} /^ +\/\*[0-9a-f]+\*\// && f ~ /rows/ {op=$2; if (op ~ /^@/) op=$3; sub(/\..*/,"",op); sub(/;$/,"",op); n[f" "op]++} END {for (k in n) print n[k], k}' $OUT/all.sass | sort -k2,2 -k1,1nr > $OUT/mix.txt
grep -n "Function :" $OUT/all.sass | grep rows
gzip -9 $OUT/all.sass
