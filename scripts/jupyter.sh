#!/usr/bin/env bash
# From a fresh clone to a running Jupyter with posenc's notebooks (web/notebooks/), in one command:
#
#   bash scripts/jupyter.sh             sets up what is missing, then starts Jupyter on web/notebooks/
#   bash scripts/jupyter.sh --no-start  sets up only (CI, a dev container's postCreateCommand)
#
# Idempotent: each step runs only when its result is missing, so a second run goes straight to Jupyter.
#   1. npm packages, when node_modules lacks what the notebooks import: `npm install` (the notebooks use
#      deno, @observablehq/plot, linkedom and @resvg/resvg-wasm from the dev dependencies; one lock file
#      means npm installs them all).
#   2. posenc's wasm modules (core and lab), when missing: scripts/build.sh --lib. Building needs
#      Emscripten and the xsimd headers: run scripts/setup.sh once first if this step says so.
#   3. A Jupyter front end, when neither `jupyter lab` nor `jupyter notebook` runs: on Debian and Ubuntu
#      the system's jupyter-notebook package (apt-get, as root or through sudo); elsewhere JupyterLab into
#      a virtual environment of this clone (build/jupyter-venv, with pip).
#   4. The Deno kernel, registered with Jupyter (`deno jupyter --install`) when missing or pointing at a
#      deno that no longer exists.
# Figures are rendered to PNG with DejaVu Sans (Debian/Ubuntu: fonts-dejavu-core); without it they are
# shown as SVG, which JupyterLab hides until the notebook is trusted.
# JUPYTER_ARGS (e.g. "--ip=0.0.0.0 --no-browser") is passed to Jupyter; PORT picks its port (8888).
set -euo pipefail
cd "$(dirname "$0")/.."
start=1
case "${1:-}" in
  --no-start) start=0 ;;
  -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
  "") ;;
  *) echo "jupyter: unknown option $1 (try --help)" >&2; exit 2 ;;
esac
t0=$SECONDS
step() { printf 'jupyter: %s\n' "$*"; }

command -v node >/dev/null || { echo "jupyter: Node.js >= 18 is needed (https://nodejs.org)" >&2; exit 1; }
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ] || { echo "jupyter: Node.js >= 18 is needed, found $(node -v)" >&2; exit 1; }

# 1. npm packages
need_npm=0
for p in deno @observablehq/plot linkedom @resvg/resvg-wasm; do [ -f "node_modules/$p/package.json" ] || need_npm=1; done
[ -x node_modules/.bin/deno ] || need_npm=1
if [ $need_npm = 1 ]; then
  step "installing the npm packages (npm install)"
  npm install --no-audit --no-fund
fi

# 2. the wasm modules the notebooks load
wasm_ok() { for f in posenc-simd posenc-scalar posenc-lab-simd posenc-lab-scalar; do [ -f "src/js/wasm/$f.wasm" ] || return 1; done; }
if ! wasm_ok; then
  step "building posenc's wasm modules (scripts/build.sh --lib)"
  bash scripts/build.sh --lib
fi

# 3. a Jupyter front end
VENV=build/jupyter-venv
[ -x "$VENV/bin/jupyter" ] && export PATH="$PWD/$VENV/bin:$PATH"
front_end() {
  if jupyter lab --version >/dev/null 2>&1; then echo lab
  elif jupyter notebook --version >/dev/null 2>&1; then echo notebook
  fi
}
front=$(front_end)
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
step "ready in $((SECONDS - t0)) s: Jupyter $front, the Deno kernel, posenc's wasm modules"
[ $start = 1 ] || exit 0
root=(); [ "$(id -u)" != 0 ] || root=(--allow-root)   # containers often run as root, which Jupyter refuses by default
# shellcheck disable=SC2086  # JUPYTER_ARGS is a list of options
exec jupyter "$front" --port="${PORT:-8888}" "${root[@]}" ${JUPYTER_ARGS:-} web/notebooks
