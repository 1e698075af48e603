#!/usr/bin/env bash
# Installs what is missing, builds everything the demo page needs and serves it at http://localhost:${PORT:-5173}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --web
echo "posenc demo: http://localhost:${PORT:-5173}/"
exec node_modules/.bin/vite preview web --port "${PORT:-5173}" --strictPort --host 127.0.0.1
