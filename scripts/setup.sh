#!/usr/bin/env bash
# Installs everything posenc needs to build and test, idempotently:
#   - Debian packages (Emscripten, Catch2, Chromium, Jupyter runner, clang runtimes)
#   - the xsimd 13.2 headers (Debian trixie's libxsimd-dev, extracted into build/deps, never installed)
#   - npm packages (npm ci)
# Usage: scripts/setup.sh [--no-npm]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS="$ROOT/build/deps"

APT_PACKAGES=(emscripten catch2 chromium jupyter-nbconvert python3-nbclient python3-ipykernel libclang-rt-14-dev gzip)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# xsimd 13.2 (bookworm's 8.1 has no wasm arch). Fetched from trixie with a private apt state,
# extracted into build/deps/xsimd; the system's sources are left untouched.
XSIMD_VERSION_WANT="13.2.0"
if [ ! -f "$DEPS/xsimd/usr/include/xsimd/xsimd.hpp" ]; then
  echo "setup: fetching xsimd $XSIMD_VERSION_WANT headers"
  mkdir -p "$DEPS/apt/lists/partial" "$DEPS/apt/cache/archives/partial" "$DEPS/debs"
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || { echo "setup: cannot find a Debian mirror URI" >&2; exit 1; }
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" > "$DEPS/apt/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$DEPS/apt/sources.list" -o "Dir::Etc::SourceParts=-"
            -o "Dir::State::Lists=$DEPS/apt/lists" -o "Dir::Cache=$DEPS/apt/cache"
            -o "Dir::State::status=/dev/null" -o "APT::Get::List-Cleanup=0" -o "Debug::NoLocking=1")
  apt-get "${APT_OPTS[@]}" update -qq
  (cd "$DEPS/debs" && apt-get "${APT_OPTS[@]}" download libxsimd-dev)
  rm -rf "$DEPS/xsimd"
  dpkg -x "$DEPS"/debs/libxsimd-dev_*.deb "$DEPS/xsimd"
fi
grep -q "XSIMD_VERSION_MAJOR 13" "$DEPS/xsimd/usr/include/xsimd/config/xsimd_config.hpp" \
  || { echo "setup: xsimd in $DEPS/xsimd is not 13.x" >&2; exit 1; }

if [ "${1:-}" != "--no-npm" ]; then
  stamp="node_modules/.posenc-setup-stamp"
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
    echo "setup: installing npm packages"
    # `npm install`, not `npm ci`: npm 11 records only this platform's optional binary of `deno`
    # in the lock file and `npm ci` then refuses the lock it wrote itself.
    npm install --no-audit --no-fund --loglevel=error
    touch "$stamp"
  fi
fi
echo "setup: ok"
