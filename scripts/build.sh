#!/usr/bin/env bash
# Builds posenc with the CMake presets of CMakePresets.json: the native core and tests (build/native), and
# the wasm module twice, SIMD and scalar (build/wasm-simd, build/wasm-scalar -> src/js/wasm/). Configures
# each build folder once; later runs rebuild what changed. Needs what scripts/setup.sh installs (npm test
# and npm start run it; run it yourself before calling this script on a fresh clone).
# Usage: scripts/build.sh [--lib | --js | --web | --page]
#   --lib:  only the wasm modules the package ships (core and lab, SIMD and scalar)
#   --js:   those and their dev builds (build/wasm-*/dev, with the test and bench hooks scripts/dev-module.mjs
#           loads): everything the node tests, the notebooks and the page load
#   --web:  the wasm modules, then the demo page (API reference with TypeDoc into web/public/api, Vite into
#           web/dist), each redone only when one of its inputs is newer than its output
#   --page: the demo page alone, from the wasm modules already built (touches no CMake build folder: it
#           may run while another build.sh builds them further)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # Emscripten 3.1.6 needs Debian's acorn etc. (Node does not search Debian's JS folder)
JOBS=$(nproc)
MODE=${1:-all}

if [ ! -f build/deps/debian/usr/include/xsimd/xsimd.hpp ] || ! command -v emcmake >/dev/null; then
  echo "build: xsimd headers or Emscripten missing; run scripts/setup.sh first (npm test and npm start do)" >&2
  exit 1
fi

configure() {  # configure <preset> [emcmake]: only once per build folder
  [ -f "build/$1/CMakeCache.txt" ] || ${2:-} cmake --preset "$1" >"build/$1.configure.log" 2>&1 \
    || { cat "build/$1.configure.log" >&2; exit 1; }
}
mkdir -p build
if [ "$MODE" != --page ]; then
  if [ "$MODE" = all ]; then
    configure native
    cmake --build build/native -j"$JOBS"
  fi
  for preset in wasm-simd wasm-scalar; do
    configure $preset emcmake
    case $MODE in
      all) cmake --build build/$preset -j"$JOBS" ;;
      --js) cmake --build build/$preset -j"$JOBS" --target posenc_wasm posenc_lab_wasm posenc_wasm_dev posenc_lab_wasm_dev ;;
      *) cmake --build build/$preset -j"$JOBS" --target posenc_wasm posenc_lab_wasm ;;
    esac
  done
  node scripts/inline-wasm.mjs   # src/js/wasm/*.inline.js for posenc/inline
  echo "build: ok ($(ls src/js/wasm | tr '\n' ' '))"
elif [ ! -f src/js/wasm/posenc-simd.wasm ] || [ ! -f src/js/wasm/posenc-scalar.wasm ]; then
  echo "build --page: build the wasm modules first (scripts/build.sh --lib)" >&2
  exit 1
fi

if [ "$MODE" = --web ] || [ "$MODE" = --page ]; then
  # stale OUTPUT INPUT...: OUTPUT is missing, or an input file is newer. Not inputs: the page's own outputs,
  # and posenc/inline's modules (the page does not load them; scripts/inline-wasm.mjs rewrites them at every
  # build, which made every npm test rebuild the page).
  stale() {
    [ ! -e "$1" ] || [ -n "$(find "${@:2}" -type f -newer "$1" -not -path 'web/dist/*' -not -path 'web/public/api/*' -not -name '*.inline.js' | head -1)" ]
  }
  api=0
  if stale web/public/api/index.html src/js/index.d.ts typedoc.json tests/types/tsconfig.json package-lock.json; then
    node_modules/.bin/typedoc --logLevel Warn
    api=1
  fi
  if [ $api = 1 ] || stale web/dist/index.html web src/js package-lock.json; then
    node_modules/.bin/vite build web --logLevel warn
  fi
  echo "build: page ok (web/dist)"
fi
