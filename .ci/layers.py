#!/usr/bin/env python3
"""Checks agent-toolkit's layering: every `crate::…` path in a module's files names a module
the crate docs' module table lets it use, no two files of one folder import each other in a
cycle, the table itself is layered, and every inherent `impl` of another module's type is
listed in the crate docs with its reason.

The table is read from the crate docs (toolkit/src/lib.rs), the rows between the markers
`<!-- layers -->` and `<!-- /layers -->`: `| `module` | what it owns | `a`, `b` |`. A path
is followed through the crate root's re-exports (`crate::Toolkit` is `toolkit`) and the
prelude. `util` and `error` are foundations every module may use; they have no row. Every
other module a row may use has a row of its own, and an earlier one: the rows go from the
bottom layer up.

A module is the first path segment under toolkit/src (`durable/job_queue.rs` is in
`durable`, `endpoint.rs` in `endpoint`). An inherent `impl Type { … }` (not `impl Trait for
Type`) of a type defined in another module is listed between `<!-- impls -->` and
`<!-- /impls -->` in the crate docs: `| `home::Type` | `file.rs` | why |`, where `home` is the
module that defines the type and `file.rs` the file of the impl, relative to toolkit/src. The
check fails on an unlisted one and on a listed one that is gone. A type's home is where a
`struct`, `enum`, `union`, `trait` or `type` of that name is defined; a name defined in more
than one module is resolved through the file's own definitions and its `use` items.

  python3 .ci/layers.py [SRC]       check (exit 1 and list every violation)
  python3 .ci/layers.py --graph     print who uses whom
  python3 .ci/layers.py --impls     print the inherent impls of other modules' types
  python3 .ci/layers.py --self-test plant an upward import, a sibling cycle, a row using a
                                    later row, an unlisted inherent impl of another module's
                                    type and a listed impl that is gone, in a copy of the
                                    sources, and check that each is caught
"""

import os
import re
import shutil
import sys
import tempfile

FOUNDATION = {"util", "error"}
ROOT_FILES = {"lib.rs"}


# ---- The crate docs' tables --------------------------------------------------------------


def doc_block(src, name):
    """The lines between `<!-- name -->` and `<!-- /name -->` in the crate docs, as
    (line number in lib.rs, text after `//!`); None when the markers are missing."""
    lines = open(os.path.join(src, "lib.rs")).read().splitlines()
    start = end = None
    for no, line in enumerate(lines, 1):
        text = line.strip()
        if text == f"//! <!-- {name} -->":
            start = no
        elif text == f"//! <!-- /{name} -->" and start is not None:
            end = no
            break
    if start is None or end is None:
        return None
    return [(no, lines[no - 1].strip()[3:].strip()) for no in range(start + 1, end)]


def table_rows(block):
    """(line number, cells) of each row of a markdown table whose first cell is code."""
    for no, line in block:
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith("`"):
            yield no, cells


def read_rows(src):
    """The module table's rows, in order: (line number, module, the modules it may use)."""
    block = doc_block(src, "layers")
    if block is None:
        sys.exit("layers: no `<!-- layers -->` table in the crate docs")
    rows = []
    for no, cells in table_rows(block):
        if len(cells) < 3:
            continue
        rows.append((no, cells[0].strip("`"), set(re.findall(r"`(\w+)`", cells[2]))))
    return rows


def check_order(rows):
    """The rows go from the bottom layer up: a row may use only modules whose rows come
    before it (or the foundations, which have none)."""
    problems = []
    first = {}
    for no, module, _ in rows:
        if module in first:
            problems.append(
                f"lib.rs:{no}: `{module}` has a second row in the module table "
                f"(the first is on line {first[module]})"
            )
        else:
            first[module] = no
    for no, module, uses in rows:
        for used in sorted(uses):
            if used in FOUNDATION:
                continue
            if used == module:
                problems.append(f"lib.rs:{no}: the row of `{module}` lists `{module}` itself")
            elif used not in first:
                problems.append(
                    f"lib.rs:{no}: the row of `{module}` may use `{used}`, which has no row "
                    f"in the module table (give `{used}` a row above it)"
                )
            elif first[used] > no:
                problems.append(
                    f"lib.rs:{no}: the row of `{module}` may use `{used}`, whose row comes "
                    f"later (line {first[used]}); the rows go from the bottom layer up, so "
                    f"move the row of `{used}` above the row of `{module}`"
                )
    return problems


def read_impl_table(src):
    """The listed inherent impls of other modules' types:
    (line number, home module, type, file, why)."""
    block = doc_block(src, "impls") or []
    rows = []
    for no, cells in table_rows(block):
        path = cells[0].strip("`")
        home, _, name = path.rpartition("::")
        file = cells[1].strip("`") if len(cells) > 1 else ""
        why = cells[2] if len(cells) > 2 else ""
        rows.append((no, home, name, file, why))
    return rows


# ---- Reading Rust ------------------------------------------------------------------------


RAW_STRING = re.compile(r'b?r(#*)"')


def blank(text):
    """`text` with its comments and the insides of its string and character literals blanked
    (newlines kept, so line numbers stay), so that code-shaped text in them is not read."""
    out = []
    i, n = 0, len(text)

    def spaces(s):
        return re.sub(r"[^\n]", " ", s)

    while i < n:
        c = text[i]
        word_start = i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        raw = RAW_STRING.match(text, i) if word_start and c in "br" else None
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(spaces(text[i:j]))
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(spaces(text[i:j]))
        elif raw:
            close = '"' + raw.group(1)
            end = text.find(close, raw.end())
            j = n if end < 0 else end + len(close)
            out.append('"' + spaces(text[i + 1 : j - 1]) + '"')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append('"' + spaces(text[i + 1 : j - 1]) + '"')
        elif c == "'" and i + 2 < n and (text[i + 1] == "\\" or text[i + 2] == "'"):
            # A character literal ('a', '\n', '\'', '\u{..}'); a lifetime has no closing quote.
            j = text.find("'", i + 3 if text[i + 1] == "\\" else i + 2)
            j = n if j < 0 else j + 1
            out.append("'" + spaces(text[i + 1 : j - 1]) + "'")
        else:
            out.append(c)
            j = i + 1
        i = j
    return "".join(out)


def strip_comments(text):
    return blank(text)


def split_top(text, sep=","):
    """`text` split on `sep` outside brackets."""
    depth, item, items = 0, "", []
    for ch in text:
        if ch in "{(<[":
            depth += 1
        elif ch in "})>]":
            depth -= 1
        if ch == sep and depth == 0:
            items.append(item)
            item = ""
        else:
            item += ch
    items.append(item)
    return items


def expand_use(tree, prefix=()):
    """The (path, name) pairs a `use` tree brings in: `crate::{a::B, c::D as E}` gives
    ((crate, a, B), B) and ((crate, c, D), E)."""
    tree = tree.strip()
    if tree.startswith("::"):
        tree = tree[2:].strip()
    if tree.startswith("{"):
        out = []
        for item in split_top(tree[1 : tree.rindex("}")]):
            if item.strip():
                out += expand_use(item, prefix)
        return out
    m = re.match(r"(\w+|\*)\s*(.*)$", tree, re.S)
    if not m:
        return []
    head, rest = m.group(1), m.group(2).strip()
    if rest.startswith("::"):
        return expand_use(rest[2:], prefix + (head,))
    path = prefix if head == "self" else prefix + (head,)
    if not path:
        return []
    alias = re.match(r"as\s+(\w+)", rest)
    return [(path, alias.group(1) if alias else path[-1])]


def imports_of(code):
    """Each name a file's `use` items bring in, and the path it stands for."""
    names = {}
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for path, name in expand_use(m.group(1)):
            if name not in ("*", "_"):
                names[name] = path
    return names


def skip_angles(text, i):
    """The index just past the `<…>` that starts at `text[i]` (`->` inside is not a close)."""
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch == "<":
            depth += 1
        elif ch == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def top_level_words(text):
    """The words of `text` outside `<…>`, `(…)` and `[…]`."""
    words, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "<([":
            depth += 1
        elif ch in ">)]" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif depth == 0:
            m = re.match(r"\w+", text[i:])
            if m:
                words.append(m.group(0))
                i += len(m.group(0))
                continue
        i += 1
    return words


def self_type(header):
    """The path of the type an inherent `impl` header is for (`impl<T> a::B<T> where …` gives
    (a, B)), or None for a trait impl or a header it cannot read."""
    rest = header.strip()
    if rest.startswith("<"):
        rest = rest[skip_angles(rest, 0) :].strip()
    words = top_level_words(rest)
    if "where" in words:
        rest = rest[: re.search(r"\bwhere\b", rest).start()]
        words = words[: words.index("where")]
    if "for" in words:
        return None
    rest = re.sub(r"^(?:&\s*(?:'\w+\s*)?(?:mut\s+)?|dyn\s+)+", "", rest.strip())
    m = re.match(r"((?:::)?\s*\w+(?:\s*::\s*\w+)*)", rest)
    if not m:
        return None
    return tuple(re.sub(r"\s", "", m.group(1)).strip(":").split("::"))


def items_of(code):
    """The type definitions and the inherent impls of a file, from one walk of its blocks:
    ([(line, name)], [(line, path of the impl's type)]). An associated type (a `type` right
    inside an `impl` or `trait` block) is not a definition."""
    defs, impls = [], []
    kinds = []  # the kind of each open block: "impl" (impl or trait), "fn", "mod", "other"
    last = 0  # where the text before the next `{` starts
    pattern = re.compile(
        r"(?:^|(?<=[\s;{}\]]))(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|auto\s+)*"
        r"(struct|enum|union|trait|type)\s+(\w+)"
    )
    for m in re.finditer(r"[{};]|" + pattern.pattern, code):
        token = m.group(0)
        if token not in ("{", "}", ";"):
            if m.group(1) != "type" or not kinds or kinds[-1] != "impl":
                defs.append((code.count("\n", 0, m.start()) + 1, m.group(2)))
            continue
        pos = m.start()
        if token == "{":
            header = code[last:pos]
            while True:  # attributes before the item
                a = re.match(r"\s*#!?\[", header)
                if not a:
                    break
                depth, j = 0, a.end() - 1
                while j < len(header):
                    depth += {"[": 1, "]": -1}.get(header[j], 0)
                    j += 1
                    if depth == 0:
                        break
                header = header[j:]
            item = re.match(r"\s*(?:default\s+)?(?:unsafe\s+)?impl\b(.*)$", header, re.S)
            if re.search(r"\bfn\b", header):
                kinds.append("fn")
            elif item:
                kinds.append("impl")
                path = self_type(item.group(1))
                if path:
                    line = code.count("\n", 0, pos - len(header) + item.start(1)) + 1
                    impls.append((line, path))
            elif re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|auto\s+)*trait\b", header):
                kinds.append("impl")
            elif re.search(r"\bmod\s+\w+\s*$", header):
                kinds.append("mod")
            else:
                kinds.append("other")
        elif token == "}" and kinds:
            kinds.pop()
        last = m.end()
    return defs, impls


def module_of(src, path):
    rel = os.path.relpath(path, src)
    first = rel.split(os.sep)[0]
    if first.endswith(".rs"):
        first = first[:-3]
    return first


def module_path(rel):
    """The module path of a file: `a2a/client/agent.rs` is a2a::client::agent, `durable/mod.rs`
    is durable."""
    parts = rel[:-3].split(os.sep)
    return parts[:-1] if parts[-1] == "mod" else parts


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


# ---- Inherent impls of other modules' types ----------------------------------------------


def cross_impls(src, modules, reexports):
    """Every inherent impl of a type defined in another module than the impl's file:
    ({(type, file): (home, line)}, problems)."""
    files = {}
    homes = {}  # type name -> the modules that define one
    for path in sorted(rust_files(src)):
        rel = os.path.relpath(path, src)
        if rel in ROOT_FILES:
            continue
        code = blank(open(path).read())
        defs, impls = items_of(code)
        files[rel] = (code, defs, impls)
        for _, name in defs:
            homes.setdefault(name, set()).add(module_of(src, path))

    def home_of(segs, rel, imports, seen=()):
        """The top-level module of the item a path names, or None when it cannot tell."""
        head = segs[0]
        if head == "crate" or head in ("self", "super"):
            here = module_path(rel) if head != "crate" else []
            while segs and segs[0] in ("crate", "self", "super"):
                if segs[0] == "super":
                    here = here[:-1]
                segs = segs[1:]
            if here:
                return here[0]
            if not segs:
                return None
            if segs[0] in modules:
                return segs[0]
            return reexports.get(segs[0])
        if head in imports and head not in seen and imports[head] != tuple(segs[:1]):
            return home_of(list(imports[head]) + list(segs[1:]), rel, imports, seen + (head,))
        return None

    found, problems = {}, []
    for rel, (code, defs, impls) in files.items():
        own = rel.split(os.sep)[0].removesuffix(".rs")
        local = {name for _, name in defs}
        imports = imports_of(code)
        for line, segs in impls:
            name = segs[-1]
            if name.startswith("$") or name in ("Self",):
                continue
            home = home_of(list(segs), rel, imports) if len(segs) > 1 else None
            if home is None and len(segs) == 1:
                if name in local:
                    home = own
                elif name in imports:
                    home = home_of(list(imports[name]), rel, imports)
            if home is None:
                defined = homes.get(name, set())
                if len(defined) == 1:
                    home = next(iter(defined))
                elif own in defined:
                    home = own
                elif not defined:
                    problems.append(
                        f"{rel}:{line}: `impl {'::'.join(segs)}`: no `struct`, `enum`, `union`, "
                        f"`trait` or `type` named `{name}` in the sources"
                    )
                    continue
                else:
                    problems.append(
                        f"{rel}:{line}: `impl {'::'.join(segs)}`: `{name}` is defined in "
                        f"{', '.join(f'`{d}`' for d in sorted(defined))} and the file does not "
                        f"say which (import it with `use crate::…::{name}`)"
                    )
                    continue
            if home != own:
                found.setdefault((name, rel), (home, line))
    return found, problems


def check_impls(src, modules, reexports):
    found, problems = cross_impls(src, modules, reexports)
    listed = {}
    for no, home, name, file, why in read_impl_table(src):
        key = (name, file)
        if key in listed:
            problems.append(
                f"lib.rs:{no}: `impl {name}` in `{file}` has a second row in the impl table "
                f"(the first is on line {listed[key]})"
            )
            continue
        listed[key] = no
        if not home:
            problems.append(
                f"lib.rs:{no}: write the impl table's `{name}` as `module::{name}`, the module "
                f"that defines it"
            )
            continue
        if not why or why in ("—", "-"):
            problems.append(f"lib.rs:{no}: the impl table's row of `impl {name}` gives no reason")
        if key not in found:
            problems.append(
                f"lib.rs:{no}: the impl table lists `impl {name}` in `{file}`, which is no "
                f"longer there (remove its row)"
            )
        elif found[key][0] != home:
            problems.append(
                f"lib.rs:{no}: the impl table says `{name}` (impl in `{file}`) is `{home}`'s, "
                f"but it is defined in `{found[key][0]}`"
            )
    for (name, rel), (home, line) in sorted(found.items(), key=lambda kv: kv[0][::-1]):
        if (name, rel) not in listed:
            own = rel.split(os.sep)[0].removesuffix(".rs")
            problems.append(
                f"{rel}:{line}: `impl {name}` in `{own}` is an inherent impl of `{home}`'s "
                f"type: move the methods home (or into an extension trait), or list it in the "
                f"crate docs' impl table (`<!-- impls -->`) with its reason"
            )
    return problems


# ---- The check ---------------------------------------------------------------------------


def check(src, graph=False):
    rows = read_rows(src)
    allowed = {module: uses for _, module, uses in rows}
    modules = set(allowed) | FOUNDATION
    reexports = root_reexports(src)
    problems = check_order(rows)
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
    problems += check_impls(src, modules, reexports)
    if graph:
        for m in sorted(edges):
            print(f"{m:12} -> {', '.join(sorted(edges[m]))}")
    return problems


def print_impls(src):
    rows = read_rows(src)
    modules = {module for _, module, _ in rows} | FOUNDATION
    found, problems = cross_impls(src, modules, root_reexports(src))
    listed = {(name, file) for _, _, name, file, _ in read_impl_table(src)}
    for (name, rel), (home, line) in sorted(found.items(), key=lambda kv: kv[0][::-1]):
        mark = "listed" if (name, rel) in listed else "NOT LISTED"
        print(f"{rel}:{line}: impl {home}::{name}  ({mark})")
    for p in problems:
        print("layers:", p)


# ---- Self-test ---------------------------------------------------------------------------


def edit(path, change):
    text = open(path).read()
    new = change(text)
    assert new != text, f"the plant changed nothing in {path}"
    with open(path, "w") as f:
        f.write(new)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def self_test(src):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")

        def fresh():
            if os.path.exists(copy):
                shutil.rmtree(copy)
            shutil.copytree(src, copy)

        def caught(what, expect):
            planted = check(copy)
            assert any(all(e in p for e in expect) for p in planted), planted
            print(f"self-test: {what} is caught:")
            for p in planted:
                print("   ", p)

        fresh()
        assert not check(copy), "the copy should pass before anything is planted"

        # An upward import: the tool declarations reach for the toolkit, through a re-export.
        with open(os.path.join(copy, "tool", "mod.rs"), "a") as f:
            f.write("\n#[allow(unused_imports)]\nuse crate::Toolkit as _Planted;\n")
        caught("a planted `use crate::Toolkit` in tool/", ["`tool` uses `toolkit`"])

        # A sibling cycle.
        fresh()
        folder = os.path.join(copy, "model")
        write(os.path.join(folder, "planted_a.rs"), "use super::planted_b::B;\npub struct A;\n")
        write(os.path.join(folder, "planted_b.rs"), "use super::planted_a::A;\npub struct B;\n")
        caught("a planted sibling cycle", ["in a cycle"])

        # A row using a later row: the row of `search` (which may use `tool`) moved above
        # the row of `tool`.
        fresh()

        def move_search_row(text):
            lines = text.split("\n")
            row = next(i for i, l in enumerate(lines) if l.startswith("//! | `search` |"))
            moved = lines.pop(row)
            tool = next(i for i, l in enumerate(lines) if l.startswith("//! | `tool` |"))
            lines.insert(tool, moved)
            return "\n".join(lines)

        edit(os.path.join(copy, "lib.rs"), move_search_row)
        caught(
            "a planted row using a later row (`search` above `tool`)",
            ["the row of `search` may use `tool`, whose row comes later"],
        )

        # A module a row may use that has no row.
        fresh()
        edit(
            os.path.join(copy, "lib.rs"),
            lambda t: t.replace(
                "over tool definitions | `tool` |", "over tool definitions | `tool`, `planted` |", 1
            ),
        )
        caught("a planted use of a module with no row", ["may use `planted`, which has no row"])

        # An unlisted inherent impl of another module's type, next to two that are not
        # cross-module: a trait impl of it, and an inherent impl of a local type of the same
        # name as another module's (resolved through the file's own definitions).
        fresh()
        write(
            os.path.join(copy, "search", "planted.rs"),
            "use crate::tool::ToolCall;\n\n"
            "pub trait Planted {}\n\n"
            "impl Planted for ToolCall {}\n\n"
            "impl ToolCall {\n    pub fn planted(&self) {}\n}\n",
        )
        write(
            os.path.join(copy, "model", "planted.rs"),
            "/// Not `tool`'s.\npub struct ToolCall;\n\n"
            "impl ToolCall {\n    pub fn planted(&self) {}\n}\n",
        )
        planted = check(copy)
        assert len(planted) == 1, planted
        assert "search/planted.rs:7: `impl ToolCall` in `search`" in planted[0], planted
        assert "`tool`'s type" in planted[0], planted
        print("self-test: a planted unlisted `impl ToolCall` in search/ is caught (and only it):")
        for p in planted:
            print("   ", p)

        # A listed impl that is gone.
        fresh()
        edit(
            os.path.join(copy, "lib.rs"),
            lambda t: t.replace(
                "//! <!-- /impls -->",
                "//! | `tool::ToolCall` | `search/planted.rs` | planted |\n//! <!-- /impls -->",
                1,
            ),
        )
        caught(
            "a planted row for an impl that is gone",
            ["lists `impl ToolCall` in `search/planted.rs`, which is no longer there"],
        )


def main():
    args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "toolkit", "src")
    if "--self-test" in args:
        self_test(os.path.normpath(src))
        return
    graph = "--graph" in args
    impls = "--impls" in args
    args = [a for a in args if not a.startswith("--")]
    if args:
        src = args[0]
    if impls:
        print_impls(os.path.normpath(src))
        return
    problems = check(os.path.normpath(src), graph)
    for p in problems:
        print("layers:", p)
    if problems:
        sys.exit(1)
    print(f"layers: every import follows the module table ({os.path.normpath(src)})")


if __name__ == "__main__":
    main()
