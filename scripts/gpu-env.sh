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
