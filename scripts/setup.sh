#!/usr/bin/env bash
# Installs what posenc needs to build and test. `npm test` and `npm start` run it first; the other scripts
# only check for what they need and point here. Idempotent: it lists what is missing, says what it will
# install, then installs it.
#   1. System packages with apt-get (as root, or through sudo), on Debian 12 and Ubuntu 22.04/24.04:
#      Emscripten, clang's libFuzzer runtime, Chromium, the Jupyter notebook runner.
#      Elsewhere (macOS, other distributions) it checks for the tools and, if one is missing, prints the
#      exact manual steps (emsdk, ...) and stops before changing anything.
#   2. Three header-only Debian packages, downloaded from the Debian mirror apt is configured with, or
#      where apt has none (Ubuntu, macOS) from deb.debian.org (POSENC_DEBIAN_MIRROR overrides both),
#      checked against the SHA-256 sums pinned below and extracted into build/deps/debian (never installed
#      system-wide): xsimd 13.2 (bookworm's 8.1 and Ubuntu's have no wasm architecture), xtl 0.7.7 (its
#      CMake package needs it) and Catch2 2.13.10 (Ubuntu 24.04 and trixie ship Catch2 3).
#      CMake finds them through their own package configs (CMakeLists.txt).
#   3. npm packages: `npm install` (not `npm ci`: npm 11 records only this platform's optional binary of
#      `deno` in the lock file and `npm ci` then refuses the lock it wrote itself).
# Usage: scripts/setup.sh [--no-npm]
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS="$PWD/build/deps/debian"
# The Debian mirror this machine's apt uses (deb822 or one-line sources), unless POSENC_DEBIAN_MIRROR is set.
apt_mirror() {
  local uri
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 ~ /debian/ {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1 || true)
  echo "${uri%/}"
}
# Ubuntu's archive has no xsimd with the wasm architecture (22.04: 7.6), so Ubuntu and other systems take
# the pinned Debian files from Debian's own CDN, which a machine that reaches Ubuntu's archive reaches too.
MIRROR=${POSENC_DEBIAN_MIRROR:-$(apt_mirror)}
MIRROR=${MIRROR:-https://deb.debian.org/debian}

# ---- 1. system packages ---------------------------------------------------------------------------
os_id=unknown os_version=""
if [ -r /etc/os-release ]; then os_id=$(. /etc/os-release && echo "$ID"); os_version=$(. /etc/os-release && echo "${VERSION_ID:-}"); fi
common=(emscripten jupyter-nbconvert python3-nbclient python3-ipykernel fonts-dejavu-core curl)
case "$os_id $os_version" in
  "debian 12") APT_PACKAGES=("${common[@]}" chromium firefox-esr clang libclang-rt-14-dev) ;;
  "ubuntu 22.04") APT_PACKAGES=("${common[@]}" chromium-browser clang) ;;   # libFuzzer is in libclang-common-14-dev
  "ubuntu 24.04") APT_PACKAGES=("${common[@]}" chromium-browser clang libclang-rt-18-dev) ;;
  *) APT_PACKAGES=() ;;
esac

manual_steps() {
  cat <<'EOF'
setup: this system is not Debian 12 or Ubuntu 22.04/24.04, and these are missing: MISSING
Install them by hand, then run npm test again (the steps below need git, cmake >= 3.21, Python 3, Node >= 18):
  # Emscripten 3.1.6 (the version the project is tested with) through emsdk:
  git clone https://github.com/emscripten-core/emsdk.git ~/emsdk
  ~/emsdk/emsdk install 3.1.6 && ~/emsdk/emsdk activate 3.1.6
  source ~/emsdk/emsdk_env.sh          # in every shell that builds posenc (or add it to your shell profile)
  # clang with libFuzzer (the fuzz targets): macOS: brew install llvm, then export PATH="$(brew --prefix llvm)/bin:$PATH"
  # Jupyter's notebook runner: python3 -m pip install nbconvert nbclient ipykernel
  # Chromium for the page tests: any Chromium or Chrome; export CHROMIUM_PATH=/path/to/its/executable
EOF
}

have_tools() {  # prints the tools that are missing, for systems without a package list
  local t
  for t in em++ emcmake clang++ cmake node; do command -v "$t" >/dev/null || printf '%s ' "$t"; done
  jupyter nbconvert --version >/dev/null 2>&1 || printf 'jupyter-nbconvert '
}

if [ ${#APT_PACKAGES[@]} -gt 0 ]; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: will install with apt-get ($os_id $os_version): ${missing[*]}"
    as_root=()
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null || { echo "setup: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2; exit 1; }
      as_root=(sudo)
    fi
    "${as_root[@]}" apt-get update -qq
    # env inside sudo: sudo drops DEBIAN_FRONTEND from the caller's environment.
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  missing=$(have_tools)
  if [ -n "$missing" ]; then manual_steps | sed "s/MISSING/$missing/" >&2; exit 1; fi
fi

# ---- 2. header-only packages from Debian, pinned -------------------------------------------------------
# file in the mirror's pool | its SHA-256 (from the suite's Packages index)
DEBS=(
  "pool/main/x/xsimd/libxsimd-dev_13.2.0-1_amd64.deb 60878acfc02bfca76e8c31d53a1b9fdff490c319e53f620f4327c9786eaf631f"
  "pool/main/x/xtl/xtl-dev_0.7.7-1_all.deb 1ac50215055cd36e6dc5efbd1c1873db936cdfa1670e3ea584d2fac8b106c805"
  "pool/main/c/catch2/catch2_2.13.10-1_amd64.deb 0b32d3017609fecef1ecb0827729c2f3cda61332dd1f50da73ea9066fb4fc7ca"
)
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }
extract() {  # extract a .deb without installing it; dpkg-deb where there is one, ar + tar elsewhere
  if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && ar x "$1") && tar -xf "$tmp"/data.tar.* -C "$2"
  rm -rf "$tmp"
}
stamp="$DEPS/.posenc-debs"
installed=$(cat "$stamp" 2>/dev/null || true)
if [ "$installed" != "${DEBS[*]}" ] && [ "$installed" != from-source ]; then
  echo "setup: will download and extract into build/deps/debian: xsimd 13.2.0, xtl 0.7.7, Catch2 2.13.10 (from $MIRROR)"
  rm -rf "$DEPS" && mkdir -p "$DEPS/.debs"
  for entry in "${DEBS[@]}"; do
    file=${entry% *} want=${entry#* } deb="$DEPS/.debs/$(basename "${entry% *}")"
    if ! curl -fsSL --retry 3 -o "$deb" "$MIRROR/$file"; then
      cat >&2 <<EOF
setup: could not download $MIRROR/$file (offline, or the file left the mirror after an update).
Install the headers from source into build/deps/debian/usr instead (any xsimd 13.x, Catch2 2.13.x; git and cmake needed):
  git clone --depth 1 -b 13.2.0 https://github.com/xtensor-stack/xsimd /tmp/xsimd
  cmake -S /tmp/xsimd -B /tmp/xsimd/build -DCMAKE_INSTALL_PREFIX="$DEPS/usr" && cmake --install /tmp/xsimd/build
  git clone --depth 1 -b v2.13.10 https://github.com/catchorg/Catch2 /tmp/catch2
  cmake -S /tmp/catch2 -B /tmp/catch2/build -DCATCH_BUILD_TESTING=OFF -DCATCH_INSTALL_DOCS=OFF -DCMAKE_INSTALL_PREFIX="$DEPS/usr"
  cmake --install /tmp/catch2/build && echo from-source > "$stamp"
EOF
      exit 1
    fi
    [ "$(sha256 "$deb")" = "$want" ] || { echo "setup: $deb does not have the pinned SHA-256 $want" >&2; exit 1; }
    extract "$deb" "$DEPS"
  done
  rm -rf "$DEPS/.debs"
  echo "${DEBS[*]}" > "$stamp"
fi

# ---- 3. npm packages -------------------------------------------------------------------------------
if [ "${1:-}" != "--no-npm" ]; then
  stamp="node_modules/.posenc-setup-stamp"
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
    echo "setup: will install the npm packages of package-lock.json (npm install)"
    npm install --no-audit --no-fund --loglevel=error
    touch "$stamp"
  fi
fi
echo "setup: ok"
