dir=build-gpu; . scripts/gpu-env.sh
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw --format=csv -lms 250 > $OUT/pstate.csv 2>&1 &
smi=$!
m() { echo "== $1" >> $OUT/log; sleep 1; shift; "$@" >> $OUT/log 2>&1; }
set="--set shapes=bonsai2-27b --set K=5120 --set N=16384 --set R=1 --set cols=1 --set threads=1 --set distribution=bonsai --set mode=cold --set skip=none --set extra=none --set time_limit_s=0.25 --quiet --stages none"
m bw-vulkan-alone build-gpu/hsdr bandwidth --backend vulkan
m run-vulkan-alone build-gpu/hsdr run matrix.yaml --out $OUT/a $set --set variants=vulkan.production,vulkan.planar2
m run-with-cuda build-gpu/hsdr run matrix.yaml --out $OUT/b $set --set variants=cuda.production,cuda.planar2,vulkan.production,vulkan.planar2
m bw-both build-gpu/hsdr bandwidth
m prof-vulkan-alone build-gpu/hsdr profile --model bonsai2-27b --layers 4 --tokens 20 --variants vulkan.planar2,vulkan.production
m prof-with-cuda build-gpu/hsdr profile --model bonsai2-27b --layers 4 --tokens 20 --variants cuda.planar2,vulkan.planar2,vulkan.production
kill $smi
grep -E "^==|GB/s|^vulkan|^cuda" $OUT/log | cut -c1-150
for d in a b; do gzip -f $OUT/$d/results.jsonl; rm -f $OUT/$d/results.csv $OUT/$d/breakeven.json $OUT/$d/*.partial*; done
