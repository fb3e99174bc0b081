#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy at the root) over the non-Qt sources, using build/dev's compile database.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-build/dev}
[ -f "$db/compile_commands.json" ] || { echo "check-tidy: no $db/compile_commands.json (configure first)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'core/*.cpp' 'devices/*.cpp' 'profilers/*.cpp' 'app/cli_main.cpp')
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$db" --quiet 2>/dev/null
echo "check-tidy: ${#files[@]} files clean"
