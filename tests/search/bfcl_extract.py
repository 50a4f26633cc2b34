#!/usr/bin/env python3
"""Extract a tool-search benchmark from the BFCL wheel (standard library only).

Usage: python3 bfcl_extract.py OUT.json [WHEEL.whl]
   or: python3 bfcl_extract.py WHEEL.whl OUT.json      (as tests/search/setup.sh calls it)
The argument ending in ".whl" is the wheel, the other one the output. If no wheel is given, `pip download --no-deps bfcl-eval==2026.3.23` is run into a temp dir.

Output: {"source", "tools":[{name,description,parameters}], "queries":[{id,category,text,relevant}]}
  * tools  = every distinct definition from every BFCL_v4_*.json file that has a
             "function" field, after schema normalisation, deduplicated by canonical
             JSON of {name, description, parameters}; sorted by (name, canonical JSON).
  * queries = single-target categories (simple_python, simple_java, simple_javascript,
             multiple, live_simple, live_multiple). text = the contents of the "user"
             messages of the first turn joined with "\n" (system messages dropped).
             relevant = [index of the tool whose canonical JSON equals the normalised
             definition, taken from the question's own "function" list, whose name is
             the ground-truth function name]. Exactly one index per query.
"""
import json, os, subprocess, sys, tempfile, zipfile

SOURCE = "bfcl-eval==2026.3.23"
CATEGORIES = ["simple_python", "simple_java", "simple_javascript",
              "multiple", "live_simple", "live_multiple"]
TYPE_MAP = {"dict": "object", "hashmap": "object", "map": "object",
            "float": "number", "double": "number",
            "long": "integer", "int": "integer", "short": "integer", "byte": "integer",
            "tuple": "array", "arraylist": "array", "list": "array", "array": "array",
            "string": "string", "char": "string", "str": "string",
            "boolean": "boolean", "bool": "boolean",
            "integer": "integer", "number": "number", "object": "object", "null": "null",
            "any": None, "": None}
NON_SCHEMA_KEYS = {"default", "enum", "example", "examples", "const"}


def norm_schema(s):
    if isinstance(s, dict):
        out = {}
        for k, v in s.items():
            if k == "type" and isinstance(v, str):
                t = TYPE_MAP.get(v.strip().lower(), v.strip().lower())
                if t is not None:
                    out[k] = t
            elif k in NON_SCHEMA_KEYS:
                out[k] = v
            else:
                out[k] = norm_schema(v)
        return out
    if isinstance(s, list):
        return [norm_schema(x) for x in s]
    return s


def norm_def(d):
    return {"name": d["name"], "description": d.get("description", ""),
            "parameters": norm_schema(d.get("parameters", {}))}


def canon(x):
    return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def read_jsonl(z, path):
    text = z.read(path).decode("utf-8")
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def main():
    args = sys.argv[1:]
    wheels = [a for a in args if a.endswith(".whl")]
    outs = [a for a in args if not a.endswith(".whl")]
    if len(outs) != 1 or len(wheels) > 1:
        sys.exit(__doc__)
    out = outs[0]
    wheel = wheels[0] if wheels else None
    if wheel is None:
        tmp = tempfile.mkdtemp()
        subprocess.check_call([sys.executable, "-m", "pip", "download", "--no-deps",
                               SOURCE, "-d", tmp])
        wheel = os.path.join(tmp, [f for f in os.listdir(tmp) if f.endswith(".whl")][0])
    z = zipfile.ZipFile(wheel)
    names = sorted(n for n in z.namelist()
                   if n.startswith("bfcl_eval/data/BFCL_v4_") and n.endswith(".json"))
    defs = {}
    for n in names:
        try:
            rows = read_jsonl(z, n)
        except ValueError:
            continue  # e.g. format_sensitivity.json is not JSON lines
        for r in rows:
            for d in r.get("function", []) or []:
                nd = norm_def(d)
                defs[canon(nd)] = nd
    order = sorted(defs, key=lambda c: (defs[c]["name"], c))
    index = {c: i for i, c in enumerate(order)}
    tools = [defs[c] for c in order]
    queries = []
    for cat in CATEGORIES:
        qs = read_jsonl(z, f"bfcl_eval/data/BFCL_v4_{cat}.json")
        ans = {a["id"]: a for a in read_jsonl(z, f"bfcl_eval/data/possible_answer/BFCL_v4_{cat}.json")}
        for q in qs:
            gt = ans[q["id"]]["ground_truth"]
            assert len(gt) == 1 and len(gt[0]) == 1, q["id"]
            gname = next(iter(gt[0]))
            cands = [d for d in q["function"] if d["name"] == gname]
            assert len(cands) == 1, q["id"]
            rel = index[canon(norm_def(cands[0]))]
            text = "\n".join(m["content"] for m in q["question"][0] if m["role"] == "user")
            queries.append({"id": q["id"], "category": cat, "text": text, "relevant": [rel]})
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"source": SOURCE, "tools": tools, "queries": queries}, f,
                  ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"{len(tools)} tools ({len(set(t['name'] for t in tools))} names), "
          f"{len(queries)} queries -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
