#!/usr/bin/env bash
# The main job, from a fresh machine: install dependencies, build, list this machine's devices and
# targets (with their measured roofline ceilings), summarise the bundled sample model, then profile
# it on every available target, store the run and write its HTML report.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev --target chipfit

chipfit=build/dev/app/chipfit
model=resources/models/cnn.onnx
out=build/main-job
mkdir -p "$out"
echo "== chipfit devices"
"$chipfit" devices
echo "== chipfit inspect $model"
"$chipfit" inspect "$model"
echo "== chipfit profile $model --all-targets"
# Every device x precision this machine offers, recommended under example limits (p99 within 5 ms,
# top-1 agreeing with the reference on at least 99 % of the inputs); the run is stored in
# $out/chipfit.db, and `chipfit report RUN_ID` writes its report again in any format.
"$chipfit" profile "$model" --all-targets --db "$out/chipfit.db" --json "$out/profile.json" \
  --trace "$out/trace.json" --report "$out/report.html" --max-latency-ms 5 --min-top1 0.99
echo "== chipfit history"
"$chipfit" history --db "$out/chipfit.db"
echo "main job: report $out/report.html, profile JSON $out/profile.json, Chrome trace $out/trace.json"
