#!/usr/bin/env bash
# Set up (idempotent) and run the capreplay demo. Extra arguments go to `capreplay demo`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"  # cds to the repo root, exports UV and UV_PYTHON
exec "$UV" run --locked capreplay demo "$@"
