#!/usr/bin/env bash
# The main job, from a fresh machine: install dependencies, build, and run chipfit on this machine's
# devices and the bundled sample model. (Profiling on every target replaces `inspect` when the
# profiler lands.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev --target chipfit

chipfit=build/dev/app/chipfit
echo "== chipfit devices"
"$chipfit" devices
echo "== chipfit inspect resources/models/cnn.onnx"
"$chipfit" inspect resources/models/cnn.onnx
