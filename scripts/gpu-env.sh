# gpu-env.sh: sourced (`. scripts/gpu-env.sh`) from the repository root by the scripts that run on the lent GPU
# machine, with $dir the build folder from scripts/gpu-build.sh: its shared libraries on LD_LIBRARY_PATH; the Vulkan
# loader's Debian packages carried as .gl unpacked when the machine lacks them (as root; kernels/vulkan/README.md
# says how to download them); the NVIDIA ICD named when the loader would not find it.
export LD_LIBRARY_PATH="$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! ldconfig -p 2>/dev/null | grep -q libGLdispatch && ls .gl/*.deb >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
nv=/usr/local/nvidia/share
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nv/vulkan/icd.d/nvidia_icd.json" ]; then
    export VK_DRIVER_FILES="$nv/vulkan/icd.d/nvidia_icd.json"
    export __EGL_VENDOR_LIBRARY_FILENAMES="$nv/glvnd/egl_vendor.d/10_nvidia.json"
fi
# The SM and memory clocks sampled every 250 ms into FILE while the measurements run (clocks_start FILE ...
# clocks_stop), when nvidia-smi is there. On the lent H200 a process that drives the GPU through Vulkan alone was seen
# at the SM's idle clock (345 MHz against 1980) for whole runs, 2-4x slower; one that also holds a CUDA context runs
# at 1980 MHz (docs/perf-notes.md, issue 19 step 8): the log shows which a run got.
clocks_start() {
    clocks_pid=
    command -v nvidia-smi >/dev/null 2>&1 || return 0
    nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw --format=csv -lms 250 >"$1" 2>&1 &
    clocks_pid=$!
}
clocks_stop() {
    [ -n "${clocks_pid:-}" ] && kill "$clocks_pid" 2>/dev/null
    clocks_pid=
}
# One line on a clocks log: how many samples had the SM below 1000 MHz, and a warning when more than a tenth did
# (the times taken then are not the kernels' at their working clock).
clocks_report() {
    [ -s "$1" ] || return 0
    awk -F', ' 'NR > 1 && $3 ~ /MHz/ { n++; if ($3 + 0 < 1000) low++ }
        END { printf "== clocks: %d of %d samples with the SM below 1000 MHz%s\n", low, n,
              (n && low > n / 10) ? " -- WARNING: times taken then are not at the working clock" : "" }' "$1"
}
# step NAME COMMAND...: run it, its output appended to $log and shown; a failure sets status=1 (the caller's exit).
# The caller sets $log (the script's log file) and $out (a folder for the step's temporary output) first.
step() {
    name=$1
    shift
    echo "== $name: $*" | tee -a "$log"
    "$@" >"$out/.step" 2>&1
    rc=$?
    cat "$out/.step" | tee -a "$log"
    rm -f "$out/.step"
    [ "$rc" -eq 0 ] || { echo "== $name: exit $rc" | tee -a "$log"; status=1; }
    return "$rc"
}
