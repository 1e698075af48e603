#!/usr/bin/env bash
# Format and lint checks (run by npm test; `npm run lint`). With --fix, rewrites files instead
# (`npm run format`): clang-format -i and Prettier --write.
set -euo pipefail
cd "$(dirname "$0")/.."
CPP_FILES=(src/core/*.hpp src/core/*.cpp src/bindings/*.cpp src/bindings/*.hpp tests/cpp/*.cpp tests/cpp/*.hpp tests/fuzz/*.cpp tests/fuzz/*.hpp scripts/bench/native.cpp)
JS_GLOBS=('src/js/**/*.{js,ts}' 'web/**/*.{js,css,html}' 'tests/**/*.{js,ts}' 'scripts/**/*.{js,mjs}' '*.js')

if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${CPP_FILES[@]}"
  npx prettier --log-level warn --write "${JS_GLOBS[@]}"
  npx eslint --fix .
  exit 0
fi

echo "lint: clang-format"
clang-format --dry-run --Werror "${CPP_FILES[@]}"

echo "lint: clang-tidy (src/core, src/bindings)"
[ -f build/native/compile_commands.json ] || cmake -S . -B build/native -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
clang-tidy -p build/native --quiet src/core/*.cpp 2>/dev/null
# The bindings compile only for wasm: point clang-tidy at Emscripten's sysroot headers.
SYSROOT=/usr/share/emscripten/cache/sysroot   # shipped by Debian's emscripten package
clang-tidy --quiet src/bindings/bindings.cpp src/bindings/dev.cpp -- -std=c++20 --target=wasm32-unknown-emscripten -msimd128 \
  -D__EMSCRIPTEN__ -nostdinc++ -nostdlibinc -isystem "$SYSROOT/include/c++/v1" -isystem "$SYSROOT/include/compat" \
  -isystem "$SYSROOT/include" -isystem build/deps/xsimd/usr/include -Isrc/core -Ibuild/native/generated 2>/dev/null

echo "lint: ESLint"
npx eslint --max-warnings 0 .

echo "lint: Prettier"
npx prettier --log-level warn --check "${JS_GLOBS[@]}"

echo "lint: tsc (index.d.ts and a typed usage example)"
npx tsc -p tests/types/tsconfig.json
echo "lint: ok"
