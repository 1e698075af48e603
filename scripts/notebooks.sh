#!/usr/bin/env bash
# Executes the Jupyter notebooks of web/notebooks/ top to bottom with Deno's kernel, headless.
#
#   scripts/notebooks.sh                      re-executes every notebook in place: refreshes the outputs
#                                             committed with them (run it after editing a notebook or lib/)
#   scripts/notebooks.sh --out DIR [NB ...]   writes executed copies to DIR, leaving the notebooks untouched
#                                             (what tests/notebooks/ does)
#
# Needs Debian's jupyter-nbconvert + python3-nbclient + python3-ipykernel (scripts/setup.sh installs them)
# and node_modules (scripts/jupyter.sh --no-start installs the notebooks' packages; npm install, all of them).
# Installs the Deno kernelspec when it is missing or points at a Deno that no longer exists, and builds the
# wasm modules if the SIMD ones the notebooks load are missing. Fails on the first cell that throws.
set -euo pipefail
cd "$(dirname "$0")/.."

out=""
notebooks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) notebooks+=("$1"); shift ;;
  esac
done
[ ${#notebooks[@]} -gt 0 ] || notebooks=(web/notebooks/*.ipynb)

if ! jupyter nbconvert --version >/dev/null 2>&1; then
  echo "notebooks: 'jupyter nbconvert' is not available; install it with scripts/setup.sh" >&2
  exit 3
fi
[ -x node_modules/.bin/deno ] || { echo "notebooks: node_modules/.bin/deno is missing; run scripts/jupyter.sh --no-start (or npm install)" >&2; exit 1; }
[ -f src/js/wasm/posenc-simd.wasm ] && [ -f src/js/wasm/posenc-lab-simd.wasm ] || bash scripts/build.sh --lib

# The kernelspec nbconvert will use for 'deno': the first kernels/deno/kernel.json on Jupyter's data
# path (the order jupyter_client searches). Reinstall when there is none or its deno is gone.
kernel_ok() {
  jupyter --paths --json | node -e '
    const fs = require("fs");
    const paths = JSON.parse(fs.readFileSync(0, "utf8")).data;
    for (const dir of paths) {
      const spec = `${dir}/kernels/deno/kernel.json`;
      if (!fs.existsSync(spec)) continue;
      const exe = JSON.parse(fs.readFileSync(spec, "utf8")).argv?.[0];
      try { fs.accessSync(exe, fs.constants.X_OK); process.exit(0); } catch { process.exit(1); }
    }
    process.exit(1);'
}
if ! kernel_ok; then
  echo "notebooks: installing the Deno kernelspec (deno jupyter --install)"
  node_modules/.bin/deno jupyter --install --force 2>&1 | grep -v 'is unstable' || true
  kernel_ok || { echo "notebooks: the Deno kernelspec is still not usable after 'deno jupyter --install'" >&2; exit 1; }
fi

args=(--to notebook --execute --ExecutePreprocessor.kernel_name=deno --ExecutePreprocessor.timeout=600
      --ExecutePreprocessor.record_timing=False)
if [ -n "$out" ]; then
  mkdir -p "$out"
  args+=(--output-dir "$out")
else
  args+=(--inplace)
fi
# One nbconvert for every notebook (a kernel each): Python and nbconvert start once, not once per notebook.
start=$SECONDS
# nbconvert's own log goes to stderr; keep it only when something fails (it names the notebook it was running).
if ! log=$(jupyter nbconvert "${args[@]}" "${notebooks[@]}" 2>&1); then
  echo "$log" | grep -v 'is unstable' >&2
  echo "notebooks: $(echo "$log" | grep -o 'Converting notebook [^ ]*' | tail -n 1 | cut -d' ' -f3) failed" >&2
  exit 1
fi
printf 'notebooks: %s executed in %d s%s\n' "${notebooks[*]}" $((SECONDS - start)) "${out:+ -> $out}"
