#!/bin/sh
# gpu-build.sh [BUILD_DIR]: build hsdr with the CUDA kernels (default build-gpu; CMAKE_CUDA_ARCHITECTURES 90a, the
# H200, unless HSDR_CUDA_ARCH says otherwise) on this machine, and copy the shared libraries it needs beside it
# (BUILD_DIR/lib), so that the folder runs on a GPU machine that has the NVIDIA driver but none of the Debian
# packages (the lent H200: carry BUILD_DIR/hsdr, BUILD_DIR/lib and BUILD_DIR/tests/test_cuda_cols, then run
# scripts/gpu-bench.sh there).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-gpu}
scripts/ensure-deps.sh build
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHSDR_CUDA=ON -DHSDR_LIKWID=OFF -DHSDR_GBENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${HSDR_CUDA_ARCH:-90a}" >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log" >&2
    exit 1
}
cmake --build "$dir" --target hsdr test_cuda_cols
mkdir -p "$dir/lib"
# the non-system libraries of the binary (glibc, libstdc++ and libgcc come from the GPU machine)
ldd "$dir/hsdr" | awk '/=> \// {print $3}' | grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
echo "gpu-build.sh: $dir/hsdr and $dir/lib/ ($(ls "$dir/lib" | tr '\n' ' '))"
