#!/usr/bin/env bash
# The tool-search benchmark corpus (see tests/search/main.rs and BENCHMARKS.md "Tool search"):
# the public Berkeley Function-Calling Leaderboard data, PyPI `bfcl-eval==2026.3.23`
# (Apache-2.0), downloaded without installing it, checked by sha256, and turned by
# bfcl_extract.py into one JSON file of tool definitions and questions:
#   target/search/bfcl.json      (or $CARGO_TARGET_DIR/search/bfcl.json)
# Idempotent: a second run does nothing. Called by .ci/run.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="${PYTHON:-python3}"
target="${CARGO_TARGET_DIR:-$root/target}"
dir="$target/search"
mkdir -p "$dir"

WHEEL="bfcl_eval-2026.3.23-py3-none-any.whl"
SHA256="3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"

if [[ -s "$dir/bfcl.json" ]]; then exit 0; fi
if [[ ! -f "$dir/$WHEEL" ]]; then
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
        "bfcl-eval==2026.3.23" -d "$dir"
fi
echo "$SHA256  $dir/$WHEEL" | sha256sum --check --quiet
"$py" "$root/tests/search/bfcl_extract.py" "$dir/$WHEEL" "$dir/bfcl.json.tmp"
mv "$dir/bfcl.json.tmp" "$dir/bfcl.json"
echo "extracted the BFCL tool-search corpus into $dir/bfcl.json"
