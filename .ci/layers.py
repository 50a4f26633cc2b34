#!/usr/bin/env python3
"""Checks agent-toolkit's layering: every `crate::…` path in a module's files names a module
the crate docs' module table lets it use, and no two files of one folder import each other
in a cycle.

The table is read from the crate docs (toolkit/src/lib.rs), the rows between the markers
`<!-- layers -->` and `<!-- /layers -->`: `| `module` | what it owns | `a`, `b` |`. A path
is followed through the crate root's re-exports (`crate::Toolkit` is `toolkit`) and the
prelude. `util` and `error` are foundations every module may use.

  python3 .ci/layers.py [SRC]       check (exit 1 and list every violation)
  python3 .ci/layers.py --graph     print who uses whom
  python3 .ci/layers.py --self-test plant an upward import and a sibling cycle in a copy
                                    of the sources and check that both are caught
"""

import os
import re
import shutil
import sys
import tempfile

FOUNDATION = {"util", "error"}
ROOT_FILES = {"lib.rs"}


def read_table(src):
    text = open(os.path.join(src, "lib.rs")).read()
    m = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", text, re.S)
    if not m:
        sys.exit("layers: no `<!-- layers -->` table in the crate docs")
    allowed = {}
    for line in m.group(1).splitlines():
        line = line.strip().lstrip("/!").strip()
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        module = cells[0].strip("`")
        uses = set(re.findall(r"`(\w+)`", cells[2]))
        allowed[module] = uses
    return allowed


def module_of(src, path):
    rel = os.path.relpath(path, src)
    first = rel.split(os.sep)[0]
    if first.endswith(".rs"):
        first = first[:-3]
    return first


def root_reexports(src):
    """Names the crate root re-exports, and the module each comes from."""
    text = open(os.path.join(src, "lib.rs")).read()
    names = {}
    for m in re.finditer(r"pub use (\w+)::(\{[^}]*\}|\w+)", text):
        module, items = m.group(1), m.group(2)
        if module == "crate":
            continue
        for item in re.findall(r"\w+", items):
            names[item] = module
    return names


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for line in text.splitlines():
        s = line.lstrip()
        if s.startswith("//"):
            out.append("")
            continue
        out.append(re.sub(r'"(?:[^"\\]|\\.)*"', '""', line))
    return "\n".join(out)


def uses_of(text, reexports, modules):
    """The top-level modules a file's `crate::` paths reach, with their line numbers."""
    found = []
    code = strip_comments(text)
    lines = code.splitlines()
    # `use crate::{a::x, b}` groups: expand the first segment of each item.
    for m in re.finditer(r"crate::\{([^;]*?)\}\s*;", code, re.S):
        line = code[: m.start()].count("\n") + 1
        depth, item, firsts = 0, "", []
        for ch in m.group(1):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                firsts.append(item.strip())
                item = ""
            else:
                item += ch
        firsts.append(item.strip())
        for f in firsts:
            head = re.match(r"(\w+)", f)
            if head:
                found.append((line, head.group(1)))
    for no, line in enumerate(lines, 1):
        for m in re.finditer(r"\bcrate::(\w+)", line):
            found.append((no, m.group(1)))
    result = []
    for no, name in found:
        if name in modules:
            result.append((no, name))
        elif name in reexports:
            result.append((no, reexports[name]))
        elif name == "prelude":
            result.append((no, "toolkit"))
    return result


def sibling_uses(text):
    """The sibling files a file reaches with `super::x`."""
    code = strip_comments(text)
    names = set(re.findall(r"\bsuper::(\w+)", code))
    for m in re.finditer(r"super::\{([^;]*?)\}", code, re.S):
        names.update(re.findall(r"(?:^|,)\s*(\w+)", m.group(1)))
    return names


def cycles(graph):
    """Each cycle of `graph` (name -> names it uses) once, from its smallest name."""
    found = []

    def walk(start, node, path):
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                found.append(list(path))
            elif nxt > start and nxt not in path:
                walk(start, nxt, path + [nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def rust_files(src):
    for dirpath, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "bin"]
        for f in files:
            if f.endswith(".rs"):
                yield os.path.join(dirpath, f)


def check(src, graph=False):
    allowed = read_table(src)
    modules = set(allowed) | FOUNDATION
    reexports = root_reexports(src)
    problems = []
    edges = {}
    for path in sorted(rust_files(src)):
        rel = os.path.relpath(path, src)
        if rel in ROOT_FILES:
            continue
        module = module_of(src, path)
        if module not in modules:
            problems.append(f"{rel}: module `{module}` is not in the crate docs' module table")
            continue
        text = open(path).read()
        for no, used in uses_of(text, reexports, modules):
            if used == module or used in FOUNDATION:
                continue
            edges.setdefault(module, set()).add(used)
            if module in FOUNDATION:
                continue
            if used not in allowed.get(module, set()):
                problems.append(
                    f"{rel}:{no}: `{module}` uses `{used}`, which the module table does not "
                    f"let it use (add it to the row of `{module}` if the layering really "
                    f"changed, or move the code)"
                )
    # Cycles among the files of one folder (`super::x`).
    folders = {}
    for path in rust_files(src):
        folder = os.path.dirname(path)
        if folder == src.rstrip(os.sep):
            continue
        name = os.path.basename(path)[:-3]
        if name == "mod":
            continue
        folders.setdefault(folder, {})[name] = sibling_uses(open(path).read())
    for folder, files in sorted(folders.items()):
        rel = os.path.relpath(folder, src)
        for cycle in cycles({a: files[a] & set(files) for a in files}):
            names = " -> ".join(f"`{n}.rs`" for n in cycle + cycle[:1])
            problems.append(f"{rel}: files import each other in a cycle: {names}")
    if graph:
        for m in sorted(edges):
            print(f"{m:12} -> {', '.join(sorted(edges[m]))}")
    return problems


def self_test(src):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src, copy)
        assert not check(copy), "the copy should pass before anything is planted"
        # An upward import: the tool declarations reach for the toolkit, through a re-export.
        with open(os.path.join(copy, "tool", "mod.rs"), "a") as f:
            f.write("\n#[allow(unused_imports)]\nuse crate::Toolkit as _Planted;\n")
        planted = check(copy)
        assert any("`tool` uses `toolkit`" in p for p in planted), planted
        print("self-test: a planted `use crate::Toolkit` in tool/ is caught:")
        for p in planted:
            print("   ", p)
        # A sibling cycle.
        shutil.rmtree(copy)
        shutil.copytree(src, copy)
        folder = os.path.join(copy, "model")
        with open(os.path.join(folder, "planted_a.rs"), "w") as f:
            f.write("use super::planted_b::B;\npub struct A;\n")
        with open(os.path.join(folder, "planted_b.rs"), "w") as f:
            f.write("use super::planted_a::A;\npub struct B;\n")
        planted = check(copy)
        assert any("in a cycle" in p for p in planted), planted
        print("self-test: a planted sibling cycle is caught:")
        for p in planted:
            print("   ", p)


def main():
    args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "toolkit", "src")
    if "--self-test" in args:
        self_test(os.path.normpath(src))
        return
    graph = "--graph" in args
    args = [a for a in args if not a.startswith("--")]
    if args:
        src = args[0]
    problems = check(os.path.normpath(src), graph)
    for p in problems:
        print("layers:", p)
    if problems:
        sys.exit(1)
    print(f"layers: every import follows the module table ({os.path.normpath(src)})")


if __name__ == "__main__":
    main()
