#!/usr/bin/env bash
# The main job, from a fresh machine: install dependencies, build, then list this machine's devices
# and targets, summarise the bundled sample model, show where its kernels run on the CPU and on the
# OpenCL device, and run it on the reference path and on every CPU and OpenCL target. (Profiling on every available
# target replaces the run steps when the profiler lands.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev --target chipfit

chipfit=build/dev/app/chipfit
model=resources/models/cnn.onnx
echo "== chipfit devices"
"$chipfit" devices
echo "== chipfit inspect $model"
"$chipfit" inspect "$model"
echo "== chipfit inspect $model --target cpu:int8"
"$chipfit" inspect "$model" --target cpu:int8
echo "== chipfit inspect $model --target opencl:0:fp16"
# No OpenCL device (no ICD) is reported with the reason (exit 2), not fatal to the job.
"$chipfit" inspect "$model" --target opencl:0:fp16 || echo "(no OpenCL device: see the reason above)"
for target in ref:fp32 cpu:fp32 cpu:int8 cpu:bf16 opencl:0:fp32 opencl:0:fp16; do
  echo "== chipfit run $model --target $target --seed 1"
  # A precision this CPU lacks (bf16 without AVX-512) is refused with the reason (exit 2): say so, go on.
  "$chipfit" run "$model" --target "$target" --seed 1 --output-dir "build/main-job/${target//:/_}" ||
    echo "(target $target: not available on this machine, see the reason above)"
done
