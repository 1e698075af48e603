#!/usr/bin/env bash
# Builds everything the demo page needs and serves it at http://localhost:${PORT:-5173}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --lib
npx typedoc --logLevel Warn
npx vite build web --logLevel warn
echo "posenc demo: http://localhost:${PORT:-5173}/"
exec npx vite preview web --port "${PORT:-5173}" --strictPort --host 127.0.0.1
