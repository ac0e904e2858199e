#!/bin/sh
# vulkan_fma.sh HSDR VECTORS: the fused-fma probe decides what the Vulkan shaders' fma_f32 is, and the checks see
# the difference. The describe line names the probe's finding; with it, vulkan.mmvq (the fork's fused fmas) passes;
# HSDR_VULKAN_FMA=emulate (the fp64 emulation on any device) passes too; HSDR_VULKAN_FMA=native (the device's fma,
# unprobed) passes where the probe found it fused and fails the bit-exact check where it did not (lavapipe).
set -u
hsdr=$1 vec=$2
line=$("$hsdr" bandwidth --backend vulkan --sizes 32K --mode hot 2>&1 | head -n 1)
case "$line" in
*"fma fused (probed: "*) fused=1 ;;
*"fma not fused (probed: "*) fused=0 ;;
*) echo "vulkan_fma: no probe finding in the context line: $line"; exit 1 ;;
esac
check() { # check MODE: the mmvq check's summary line under HSDR_VULKAN_FMA=MODE (a sanitizer's report may follow it)
    HSDR_VULKAN_FMA=$1 "$hsdr" check --variant vulkan.mmvq "$vec/matvec.json" 2>&1 |
        grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1
}
probe=$(check probe) emulate=$(check emulate) native=$(check native)
echo "vulkan_fma: fused=$fused; probe: $probe; emulate: $emulate; native: $native"
case "$probe" in *" passed, 0 failed") ;; *) echo "vulkan_fma: FAIL the probed build"; exit 1 ;; esac
case "$emulate" in *" passed, 0 failed") ;; *) echo "vulkan_fma: FAIL the emulation"; exit 1 ;; esac
if [ "$fused" = 1 ]; then
    case "$native" in *" passed, 0 failed") ;; *) echo "vulkan_fma: FAIL native on a fused device"; exit 1 ;; esac
else
    case "$native" in *" passed, 0 failed") echo "vulkan_fma: FAIL native on an unfused device passed"; exit 1 ;; esac
fi
echo "vulkan_fma: ok"
