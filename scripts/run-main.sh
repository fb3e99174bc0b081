#!/usr/bin/env bash
# The main job, from a fresh machine: install dependencies, build, then list this machine's devices
# and targets, summarise the bundled sample model and run it on the reference path. (Profiling on
# every available target replaces the last two steps when the profiler lands.)
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
echo "== chipfit run $model --target ref:fp32 --seed 1"
"$chipfit" run "$model" --target ref:fp32 --seed 1 --output-dir build/main-job
