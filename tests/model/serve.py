"""Runs llama.cpp's own HTTP server (the `xllamacpp` wheel) on loopback for the real-model tests.

    serve.py MODEL.gguf PORT [TEMPLATE.jinja]

Without a template the model's own chat template (from the GGUF) is used; with one, that Jinja
text replaces it. Prints `ready` on stdout once `/health` answers, then serves until its
standard input closes (the test process ended or dropped the fixture) or it is killed.
"""
import os
import sys
import time
import urllib.request

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import xllamacpp  # noqa: E402  (after the environment it reads)


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = {"local"}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = int(os.environ.get("MODEL_N_CTX", "4096"))
    params.n_parallel = 1
    threads = int(os.environ.get("MODEL_THREADS", "2"))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    # Without this, a prompt whose start is cached is computed in other batch sizes than one
    # that is not, and the logits (so, at temperature 0, the answers) depend on which requests
    # came before: tests sharing a server would not be deterministic.
    params.cache_prompt = os.environ.get("MODEL_CACHE_PROMPT", "0") == "1"
    params.ui = False
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as f:
            params.chat_template = f.read()
    server = xllamacpp.Server(params)  # noqa: F841  (serves while it lives)

    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"llama.cpp's server did not become healthy on port {port} within 120 s")
        time.sleep(0.1)
    print("ready", flush=True)
    # Serve until the parent goes away: its end of our stdin closes.
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
