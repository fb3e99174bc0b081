#!/usr/bin/env bash
# The whole test suite, from a fresh machine: install dependencies, configure, build, run CTest.
# Usage: scripts/run-tests.sh [PRESET]   (dev by default; asan for the sanitizer build)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}

scripts/setup-deps.sh
scripts/fetch-models.sh
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" -j "$(nproc)"
