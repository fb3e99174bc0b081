#!/usr/bin/env bash
# Packs what a GPU machine without chipfit's Debian libraries needs to run the CUDA checks
# (scripts/cuda-gpu-checks.sh): the chipfit CLI and the CUDA test binary, every library they load except
# the NVIDIA driver's and the CUDA libraries the GPU machine brings (cuBLASLt and cuDNN are opened with
# dlopen there), glibc with its loader in a folder of its own (used only where the machine's glibc is
# older than Debian 12's), the real models and the ONNX backend suite. Stripped and xz-compressed.
# Usage: scripts/cuda-bundle.sh [BUILD_DIR (build/dev)] [OUT (build/gpu-bundle.tar.xz)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
out=${2:-build/gpu-bundle.tar.xz}
bins=("$build/app/chipfit" "$build/tests/devices/cuda/cuda_test")
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "cuda-bundle: $b is missing: build $build with the CUDA toolkit present first" >&2; exit 2; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/glibc" "$stage/models" "$stage/suite" "$stage/out"
cp "${bins[@]}" "$stage/bin/"
# The libraries the dynamic loader resolves here. glibc's own libraries go apart: on a machine with a
# glibc at least as new they must not replace its own.
ldd "${bins[@]}" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libcuda.so*) ;;  # the driver: the GPU machine's own
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.*) cp -L "$lib" "$stage/glibc/" ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/glibc/"
# NVML and the libraries opened with dlopen are not ldd dependencies: nothing else to copy.
strip --strip-unneeded "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true
cp .cache/models/*.onnx "$stage/models/"
for suite in node simple pytorch-converted pytorch-operator; do
  cp -r "/usr/share/libonnx-testdata/data/$suite" "$stage/suite/"
done
cp scripts/cuda-gpu-checks.sh "$stage/run.sh"
git rev-parse --short HEAD > "$stage/REVISION"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" .
echo "cuda-bundle: $out ($(du -h "$out" | cut -f1)), revision $(cat "$stage/REVISION")"
