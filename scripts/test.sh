#!/usr/bin/env bash
# Runs every test: Catch2 natively and compiled to wasm (SIMD and scalar) under ctest, type checks,
# the reliability suite (sanitizers, fuzzing), then the Node test runner over the package, the
# npm-pack smoke test, the notebooks and the page in headless Chromium. Installs and builds what is
# missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export NODE_PATH=/usr/share/nodejs

echo "== Catch2: native, wasm-simd, wasm-scalar"
for dir in build/native build/wasm-simd build/wasm-scalar; do
  (cd $dir && ctest --output-on-failure)
done

echo "== format, lint and types"
bash scripts/lint.sh

if [ -f scripts/reliability.sh ]; then
  echo "== reliability: sanitizers and fuzzing"
  bash scripts/reliability.sh
fi

echo "== web page build (with the API reference)"
npx typedoc --logLevel Warn
npx vite build web --logLevel warn

echo "== node:test (package, pack smoke test, notebooks, browser)"
suites=(tests/js/ tests/browser/)
[ -d tests/notebooks ] && suites+=(tests/notebooks/)
node --test "${suites[@]}"
