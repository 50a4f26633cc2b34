#!/usr/bin/env bash
# Installs the official Python SDKs that the interop tests use as real peers, each in its own
# virtual environment under target/py/ (outside git). Idempotent: a finished environment has a
# `.ready` marker and is skipped. Called by .ci/run, and by the tests themselves when missing.
#   target/py/a2a1   a2a-sdk 1.x (A2A 1.0, with its 0.3 compatibility layer) + uvicorn
#   target/py/a2a03  a2a-sdk 0.3.26 (pure A2A 0.3 `kind` shapes) + uvicorn
#   target/py/mcp    mcp 2.x (the official MCP Python SDK) + uvicorn
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="${PYTHON:-python3}"
mkdir -p "$root/target/py"

make_env() {
    local name="$1"; shift
    local dir="$root/target/py/$name"
    if [[ -f "$dir/.ready" ]]; then return 0; fi
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    touch "$dir/.ready"
    echo "installed $name: $*"
}

(
    # One installer at a time, whoever calls (CI or several test binaries at once).
    flock 9
    make_env a2a1 "a2a-sdk[http-server]==1.3.0" "uvicorn==0.54.0" "httpx==0.28.1"
    make_env a2a03 "a2a-sdk[http-server]==0.3.26" "uvicorn==0.54.0"
    make_env mcp "mcp==2.3.0" "uvicorn==0.54.0"
) 9> "$root/target/py/.lock"
