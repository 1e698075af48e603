#!/usr/bin/env bash
# Format and lint checks (run by npm test; `npm run lint`), the checks side by side: clang-format,
# clang-tidy (src/core, src/bindings), ESLint, Prettier, tsc. With --fix, rewrites files instead (`npm run
# format`): clang-format -i, Prettier --write, ESLint --fix.
# What a check found clean is not checked again while its inputs are unchanged: ESLint's and Prettier's
# own caches (keyed on each file's content and the configuration), tsc's incremental build info, and for
# clang-tidy a stamp holding the hash of its inputs, flags and version (in build/lint/).
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$PWD/node_modules/.bin:$PATH"   # not npx: it costs ~2 s per call
CPP_FILES=(src/core/*.hpp src/core/*.cpp src/bindings/*.cpp src/bindings/*.hpp tests/cpp/*.cpp tests/cpp/*.hpp tests/fuzz/*.cpp tests/fuzz/*.hpp scripts/bench/native.cpp)
JS_GLOBS=('src/js/**/*.{js,ts}' 'web/**/*.{js,css,html}' 'tests/**/*.{js,ts}' 'scripts/**/*.{js,mjs}' '*.js')

if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${CPP_FILES[@]}"
  prettier --log-level warn --write "${JS_GLOBS[@]}"
  eslint --fix .
  exit 0
fi

# clang-tidy: the core is checked as one translation unit that includes every src/core/*.cpp, so xsimd and
# the standard headers are parsed and matched once instead of once per file (~8 s instead of ~65 s of CPU).
# Its flags are the core's own, from the native build's compile_commands.json.
[ -f build/native/compile_commands.json ] || cmake --preset native >/dev/null
mkdir -p build/lint build/native/generated
node scripts/contract-hpp.mjs build/native/generated/contract.hpp   # the core's generated header (written only when it changed)
for f in src/core/*.cpp; do echo "#include \"$PWD/$f\"  // NOLINT(bugprone-suspicious-include)"; done >build/lint/core.cpp
CORE_FLAGS=()
while IFS= read -r flag; do CORE_FLAGS+=("$flag"); done < <(node -e '
  const cmd = require("./build/native/compile_commands.json").find((c) => c.file.includes("/src/core/")).command;
  const args = cmd.match(/"[^"]*"|\S+/g).map((a) => a.replace(/^"(.*)"$/, "$1")).slice(1);   // no compiler
  console.log(args.filter((a, i) => !["-o", "-c"].includes(a) && !["-o", "-c"].includes(args[i - 1])).join("\n"));')
# The bindings compile only for wasm: point clang-tidy at Emscripten's sysroot headers.
SYSROOT=/usr/share/emscripten/cache/sysroot   # shipped by Debian's emscripten package
BINDING_FLAGS=(-std=c++20 --target=wasm32-unknown-emscripten -fno-exceptions -msimd128 -D__EMSCRIPTEN__ -nostdinc++ -nostdlibinc
  -isystem "$SYSROOT/include/c++/v1" -isystem "$SYSROOT/include/compat" -isystem "$SYSROOT/include"
  -isystem build/deps/debian/usr/include -Isrc/core -Ibuild/native/generated)

# tidy NAME FILE... -- FLAGS...: clang-tidy, skipped when the files, the headers of src/ and the contract,
# .clang-tidy, the flags and clang-tidy's version hash as they did at its last clean run.
tidy() {
  local name=$1 stamp=build/lint/$1.clean key
  shift
  key=$({ clang-tidy --version; printf '%s\n' "$@"; cat .clang-tidy src/core/* src/bindings/* build/native/generated/contract.hpp; } | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then echo "clang-tidy $name: unchanged since its last clean run"; return 0; fi
  rm -f "$stamp"
  clang-tidy --quiet "$@" && echo "$key" >"$stamp"
}
export -f tidy

source scripts/jobs.sh
job clang-format clang-format --dry-run --Werror "${CPP_FILES[@]}"
job clang-tidy-core bash -c 'tidy core "$@"' _ build/lint/core.cpp -- "${CORE_FLAGS[@]}"
job clang-tidy-bindings bash -c 'tidy bindings "$@"' _ src/bindings/bindings.cpp src/bindings/dev.cpp -- "${BINDING_FLAGS[@]}"
job eslint eslint --max-warnings 0 --cache --cache-strategy content --cache-location build/lint/eslintcache .
job prettier prettier --log-level warn --check --cache --cache-strategy content --cache-location build/lint/prettiercache "${JS_GLOBS[@]}"
# The repository stands on its own: no file points at documents outside it (its source documents, a
# tracker's issue numbers, paths of the machine it was written on). This file holds the patterns.
outside() {
  ! git ls-files -z | grep -zv -e '\.png$' -e '\.bin$' -e 'package-lock\.json$' -e '^scripts/lint\.sh$' | xargs -0 grep -nEi \
    -e 'seed 00[0-9]|seed documents?|\bas the seeds\b|\bseeds'"'"' [a-z]' -e 'issues? #[0-9]+|\bissue [0-9]+' \
    -e '\.\./shared/|\b(API|TOOLCHAIN|STYLE)\.md\b|/work/'
}
export -f outside
job outside bash -c outside
job tsc tsc -p tests/types/tsconfig.json --incremental --tsBuildInfoFile build/lint/types.tsbuildinfo   # index.d.ts against a typed usage example
echo "lint: clang-format, clang-tidy, ESLint, Prettier, tsc, references outside the repository"
wait_jobs || { echo "lint: failed" >&2; exit 1; }
echo "lint: ok"
