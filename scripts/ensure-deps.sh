#!/bin/sh
# ensure-deps.sh [GROUP...]: make sure the Debian packages a command needs are installed.
# Groups: build (compilers, cmake, ninja, pkg-config, cJSON, libyaml, hwloc, Google Benchmark, likwid, help2man for
# the man page, the Vulkan loader and headers, glslang, spirv-tools and mesa lavapipe),
# test (python3, valgrind, clang and its libFuzzer + sanitizer runtimes for scripts/fuzz.sh),
# plots (matplotlib). Installs what is missing with apt-get when run as root (apt-get update once per run);
# otherwise prints the exact apt-get line to run and exits 1.
set -eu
[ $# -gt 0 ] || set -- build
pkgs=""
for group in "$@"; do
    case "$group" in
    build) pkgs="$pkgs gcc g++ make cmake ninja-build pkg-config libcjson-dev libyaml-dev libhwloc-dev libbenchmark-dev
        likwid help2man libvulkan-dev glslang-tools spirv-tools mesa-vulkan-drivers" ;;
    test) pkgs="$pkgs python3 valgrind clang libclang-rt-14-dev" ;;
    plots) pkgs="$pkgs python3 python3-matplotlib" ;;
    *) echo "ensure-deps.sh: unknown group '$group' (build, test, plots)" >&2; exit 2 ;;
    esac
done
missing=""
for p in $pkgs; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
    *"install ok installed"*) ;;
    *) case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac ;;
    esac
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "hsdr-bench needs these Debian packages:$missing" >&2
    echo "run:  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
echo "ensure-deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
