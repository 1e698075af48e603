#!/usr/bin/env bash
# From a fresh clone to a running Jupyter with posenc's notebooks (web/notebooks/), in one command:
#
#   bash scripts/jupyter.sh                 sets up what is missing, then starts Jupyter on web/notebooks/
#   bash scripts/jupyter.sh --no-start      sets up only (CI, a dev container's postCreateCommand)
#   bash scripts/jupyter.sh --execute [NB]  sets up, then executes notebooks headless into build/notebooks-run/
#                                           (NB: a prefix such as 01, or a path; default every notebook), and
#                                           prints the time from the start of the command to executed notebooks
#
# Idempotent: each step runs only when its result is missing, so a second run goes straight to Jupyter.
#   1. npm packages, when node_modules lacks what the notebooks import. Without a node_modules, only the
#      notebooks' own: web/notebooks/npm/ (deno, @observablehq/plot, linkedom, @resvg/resvg-wasm and their
#      dependencies, at the versions of the repository's package-lock.json, which lock.mjs there cuts them
#      from), not the build and test tools of `npm install`. With a node_modules that lacks one: `npm install`.
#   2. posenc's SIMD wasm modules (core and lab: the notebooks' Deno runs the SIMD build), when missing:
#      the wasm-simd preset of CMakePresets.json, targets posenc_wasm and posenc_lab_wasm. Building needs
#      Emscripten and the xsimd headers: when they are missing, scripts/setup.sh --no-npm installs them.
#   3. A Jupyter front end (not for --execute, which needs only nbconvert), when neither `jupyter lab` nor
#      `jupyter notebook` runs: on Debian and Ubuntu the system's jupyter-notebook package (apt-get, as root
#      or through sudo); elsewhere JupyterLab into a virtual environment of this clone (build/jupyter-venv).
#   4. The Deno kernel, registered with Jupyter (`deno jupyter --install`) when missing or pointing at a
#      deno that no longer exists.
# Figures are rendered to PNG with DejaVu Sans (Debian/Ubuntu: fonts-dejavu-core); without it they are
# shown as SVG, which JupyterLab hides until the notebook is trusted.
# JUPYTER_ARGS (e.g. "--ip=0.0.0.0 --no-browser") is passed to Jupyter; PORT picks its port (8888).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=start
execute=()
case "${1:-}" in
  --no-start) mode=setup ;;
  --execute)
    mode=execute
    for nb in "${@:2}"; do
      if [ -f "$nb" ]; then execute+=("$nb"); continue; fi
      found=(web/notebooks/"$nb"*.ipynb)
      [ -f "${found[0]}" ] || { echo "jupyter: no notebook web/notebooks/$nb*.ipynb" >&2; exit 2; }
      execute+=("${found[@]}")
    done ;;
  -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
  "") ;;
  *) echo "jupyter: unknown option $1 (try --help)" >&2; exit 2 ;;
esac
t0=$SECONDS
step() { printf 'jupyter: %s\n' "$*"; }

command -v node >/dev/null || { echo "jupyter: Node.js >= 18 is needed (https://nodejs.org)" >&2; exit 1; }
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ] || { echo "jupyter: Node.js >= 18 is needed, found $(node -v)" >&2; exit 1; }

# 1. npm packages
read -r -a packages <<<"$(node -p 'Object.keys(require("./web/notebooks/npm/package.json").dependencies).join(" ")')"
npm_ok() { for p in "${packages[@]}"; do [ -f "node_modules/$p/package.json" ] || return 1; done; [ -x node_modules/.bin/deno ]; }
if ! npm_ok; then
  if [ -e node_modules ]; then
    step "installing the npm packages (npm install: node_modules lacks some of ${packages[*]})"
    npm install --no-audit --no-fund
  else
    # installed next to a copy of the notebooks' manifest and lock, then moved to where Node and Deno look
    step "installing the notebooks' npm packages (web/notebooks/npm: ${packages[*]} and their dependencies)"
    tmp=build/notebook-npm
    rm -rf "$tmp" && mkdir -p "$tmp"
    cp web/notebooks/npm/package.json web/notebooks/npm/package-lock.json "$tmp/"
    (cd "$tmp" && npm ci --no-audit --no-fund)
    mv "$tmp/node_modules" node_modules
    rm -rf "$tmp"
  fi
  npm_ok || { echo "jupyter: node_modules still lacks one of ${packages[*]} after installing" >&2; exit 1; }
fi

# 2. the wasm modules the notebooks load: the SIMD builds of the core and of the lab
wasm_ok() { for f in posenc-simd posenc-lab-simd; do [ -f "src/js/wasm/$f.wasm" ] && [ -f "src/js/wasm/$f.mjs" ] || return 1; done; }
if ! wasm_ok; then
  if [ ! -f build/deps/debian/usr/include/xsimd/xsimd.hpp ] || ! command -v emcmake >/dev/null; then
    step "installing Emscripten and the xsimd headers (scripts/setup.sh --no-npm)"
    bash scripts/setup.sh --no-npm
  fi
  step "building posenc's SIMD wasm modules (cmake --preset wasm-simd, posenc_wasm posenc_lab_wasm)"
  export NODE_PATH=/usr/share/nodejs # Emscripten 3.1.6 needs Debian's acorn etc. (as scripts/build.sh)
  mkdir -p build
  [ -f build/wasm-simd/CMakeCache.txt ] || emcmake cmake --preset wasm-simd >build/wasm-simd.configure.log 2>&1 ||
    { cat build/wasm-simd.configure.log >&2; exit 1; }
  cmake --build build/wasm-simd -j"$(nproc)" --target posenc_wasm posenc_lab_wasm
  wasm_ok || { echo "jupyter: the build did not write src/js/wasm/posenc-simd and posenc-lab-simd" >&2; exit 1; }
fi

# 3. a Jupyter front end
VENV=build/jupyter-venv
[ -x "$VENV/bin/jupyter" ] && export PATH="$PWD/$VENV/bin:$PATH"
front_end() {
  if jupyter lab --version >/dev/null 2>&1; then echo lab
  elif jupyter notebook --version >/dev/null 2>&1; then echo notebook
  fi
}
front=nbconvert
[ $mode = execute ] || front=$(front_end)
if [ -z "$front" ] && command -v apt-get >/dev/null && { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null; }; then
  # Debian and Ubuntu package the classic notebook (Debian 12: 6.4): a system package, no pip
  step "installing Jupyter Notebook with apt-get (jupyter-notebook)"
  as_root=(); [ "$(id -u)" = 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jupyter-notebook >/dev/null
  front=$(front_end)
fi
if [ -z "$front" ]; then
  command -v python3 >/dev/null || { echo "jupyter: Python 3 is needed for Jupyter" >&2; exit 1; }
  step "installing JupyterLab into $VENV (pip)"
  if ! { python3 -m venv "$VENV" && "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check jupyterlab; }; then
    rm -rf "$VENV"
    echo "jupyter: could not install JupyterLab with pip (python3-venv missing, or no network?); install JupyterLab or Jupyter Notebook yourself and run this again" >&2
    exit 1
  fi
  export PATH="$PWD/$VENV/bin:$PATH"
  front=lab
fi

# 4. the Deno kernel: the first kernels/deno/kernel.json on Jupyter's data path must run an existing deno
kernel_ok() {
  # shellcheck disable=SC2016  # JavaScript, not shell
  jupyter --paths --json | node -e '
    const fs = require("fs");
    for (const dir of JSON.parse(fs.readFileSync(0, "utf8")).data) {
      const spec = `${dir}/kernels/deno/kernel.json`;
      if (!fs.existsSync(spec)) continue;
      try { fs.accessSync(JSON.parse(fs.readFileSync(spec, "utf8")).argv[0], fs.constants.X_OK); process.exit(0); } catch { process.exit(1); }
    }
    process.exit(1);'
}
if ! kernel_ok; then
  step "registering the Deno kernel (deno jupyter --install)"
  node_modules/.bin/deno jupyter --install --force 2>&1 | grep -v 'is unstable' || true
  kernel_ok || { echo "jupyter: the Deno kernel is still not registered after 'deno jupyter --install'" >&2; exit 1; }
fi

fc-list 2>/dev/null | grep -qi 'DejaVuSans' || [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] ||
  step "note: DejaVu Sans is missing (fonts-dejavu-core): figures will be SVG instead of PNG"
if [ $mode = execute ]; then
  [ ${#execute[@]} -gt 0 ] || execute=(web/notebooks/*.ipynb)
  bash scripts/notebooks.sh --out build/notebooks-run "${execute[@]}"
  step "executed in $((SECONDS - t0)) s from the start of this command: ${execute[*]} -> build/notebooks-run"
  exit 0
fi
step "ready in $((SECONDS - t0)) s: Jupyter $front, the Deno kernel, posenc's wasm modules"
[ $mode = start ] || exit 0
root=(); [ "$(id -u)" != 0 ] || root=(--allow-root)   # containers often run as root, which Jupyter refuses by default
# shellcheck disable=SC2086  # JUPYTER_ARGS is a list of options
exec jupyter "$front" --port="${PORT:-8888}" "${root[@]}" ${JUPYTER_ARGS:-} web/notebooks
