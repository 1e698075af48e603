#!/usr/bin/env bash
# Builds posenc: the native core and tests (build/native), and the wasm module twice, SIMD and
# scalar (build/wasm-simd, build/wasm-scalar -> src/js/wasm/). Installs what is missing first.
# Usage: scripts/build.sh [--lib]   (--lib: only the two wasm modules the package needs)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export NODE_PATH=/usr/share/nodejs   # Emscripten 3.1.6 needs Debian's acorn etc. (TOOLCHAIN quirk 1)
JOBS=$(nproc)
NODE_BIN=$(command -v node)
LIB_ONLY=0
[ "${1:-}" = "--lib" ] && LIB_ONLY=1

if [ $LIB_ONLY = 0 ]; then
  [ -f build/native/CMakeCache.txt ] || cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  cmake --build build/native -j"$JOBS"
fi
for flavour in simd scalar; do
  dir=build/wasm-$flavour
  simd=ON; [ $flavour = scalar ] && simd=OFF
  # The emulator override replaces emcmake's node flag that Node 20 rejects (TOOLCHAIN quirk 5).
  [ -f $dir/CMakeCache.txt ] || emcmake cmake -S . -B $dir -DCMAKE_BUILD_TYPE=Release -DPOSENC_SIMD=$simd \
    -DCMAKE_CROSSCOMPILING_EMULATOR="$NODE_BIN;--no-experimental-fetch" >/dev/null
  if [ $LIB_ONLY = 1 ]; then cmake --build $dir -j"$JOBS" --target posenc_wasm; else cmake --build $dir -j"$JOBS"; fi
done
node scripts/inline-wasm.mjs   # src/js/wasm/*.inline.js for posenc/inline
echo "build: ok ($(ls src/js/wasm | tr '\n' ' '))"
