#!/usr/bin/env bash
# The prepared device check of issue 19: one command on a GPU machine, bounded in time, its log
# and figures kept. Usage: tests/gpu/run-on-device.sh [OUT_DIR] (default: a temporary folder).
# Where Python packages are missing there (libcst; jsonschema is optional), wheels put in .whl/
# are installed first into a private target, never into the machine's own environment.
set -uo pipefail
out="${1:-${OUT:-$(mktemp -d)}}"
mkdir -p "$out"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/torchlint-site .whl/*.whl || exit 3
    export PYTHONPATH="/tmp/torchlint-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 TORCHLINT_GPU_FIGURES="$out/gpu-figures.json"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
timeout 420 make test-gpu GPU_PYTHON=python3 2>&1 | tee "$out/test-gpu.log"
status=${PIPESTATUS[0]}
echo "make test-gpu exited with $status; log and figures in $out"
exit "$status"
