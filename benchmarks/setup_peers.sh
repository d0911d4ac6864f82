#!/usr/bin/env bash
# Install the peer linters that benchmarks/compare.py times, into their own virtual environment
# (benchmarks/.peers-venv/, ignored by git), from PyPI. Optional: compare.py skips what is missing.
#
#   bash benchmarks/setup_peers.sh            # torchfix and fixit, latest releases
#   PYTHON=python3.12 bash benchmarks/setup_peers.sh
#
# Kept apart from the project's .venv so that their pins of libcst and friends never change
# what torchlint itself runs against.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.peers-venv"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet torchfix fixit
"$venv/bin/python" -m pip list 2>/dev/null | grep -iE '^(torchfix|fixit|libcst) ' || true
echo "peers installed in $venv"
