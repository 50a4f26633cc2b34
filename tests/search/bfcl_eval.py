#!/usr/bin/env python3
"""Tool-search evaluation on BFCL (standard library only). See METHOD.md.

Usage:
  python3 bfcl_eval.py BFCL.json                      # print the figures table + golden cases
  python3 bfcl_eval.py BFCL.json --dump-distractors D.json
  python3 bfcl_eval.py BFCL.json --query "text" [--10k]  # show the top 10 of the final method

BFCL.json is the output of bfcl_extract.py.
"""
import hashlib, heapq, json, math, re, sys

# --------------------------------------------------------------------------- PRNG
M64 = (1 << 64) - 1


class SplitMix64:
    """splitmix64 (Steele, Lea, Flood 2014); all arithmetic wrapping mod 2^64."""

    def __init__(self, seed):
        self.state = seed & M64

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next_u64() % n


# --------------------------------------------------------------------- distractors
DISTRACTOR_SEED = 0x5EED
TARGET_SIZE = 10_000


def name_parts(name):
    return [p for p in re.split(r"[._\-]", name) if p]


def space_words(s):
    return [w for w in s.split(" ") if w]


def make_distractors(tools, total=TARGET_SIZE, seed=DISTRACTOR_SEED):
    rng = SplitMix64(seed)
    n = len(tools)
    used = set(t["name"] for t in tools)
    out = []
    while n + len(out) < total:
        a = tools[rng.below(n)]
        b = tools[rng.below(n)]
        if a["name"] == b["name"]:
            continue
        pa, pb = name_parts(a["name"]), name_parts(b["name"])
        name = "_".join(pa[: (len(pa) + 1) // 2] + pb[len(pb) // 2:])
        if name in used:
            continue
        used.add(name)
        wa, wb = space_words(a["description"]), space_words(b["description"])
        desc = " ".join(wa[: (len(wa) + 1) // 2] + wb[len(wb) // 2:])
        props, req = {}, []
        for src, first_half in ((a, True), (b, False)):
            p = src["parameters"].get("properties", {})
            keys = sorted(p)
            sel = keys[: (len(keys) + 1) // 2] if first_half else keys[len(keys) // 2:]
            r = src["parameters"].get("required", [])
            for k in sel:
                if k in props:
                    continue
                props[k] = p[k]
                if k in r:
                    req.append(k)
        out.append({"name": name, "description": desc,
                    "parameters": {"type": "object", "properties": props, "required": req}})
    return out


# ------------------------------------------------------------------------ tokenizer
# A "run" is a maximal sequence of characters that are ASCII letters/digits or non-ASCII.
RUN_RE = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")

STOPWORDS = frozenset("""
a an and are as at be been but by can could d do does for from get give had has
have he her his how i if in into is it its ll let like m me my need of on or our
please re s she should show so some t tell than that the their them then there
these they this those to us ve was we what when where which who will with would
you your""".split())


def _up(c):
    return "A" <= c <= "Z"


def _lo(c):
    return "a" <= c <= "z"


def _dg(c):
    return "0" <= c <= "9"


def split_run(r, digits=False):
    """camelCase split: cut before i when r[i-1] lower & r[i] upper, or when
    r[i-1] upper & r[i] upper & r[i+1] lower (HTTPServer -> HTTP|Server).
    digits=True also cuts at ASCII letter/digit boundaries (not used by the final method)."""
    out, start = [], 0
    for i in range(1, len(r)):
        p, c = r[i - 1], r[i]
        if ((_lo(p) and _up(c))
                or (_up(p) and _up(c) and i + 1 < len(r) and _lo(r[i + 1]))
                or (digits and ((_dg(p) and (_up(c) or _lo(c))) or ((_up(p) or _lo(p)) and _dg(c))))):
            out.append(r[start:i])
            start = i
    out.append(r[start:])
    return out


def ascii_lower(s):
    return "".join(chr(ord(c) + 32) if _up(c) else c for c in s)


def has_vowel(s):
    return any(c in "aeiou" for c in s)


def undouble(t):
    if len(t) >= 2 and t[-1] == t[-2] and t[-1] not in "lsz":
        return t[:-1]
    return t


def stem(t):
    if len(t) < 4 or not all(_lo(c) for c in t):
        return t
    # step 1: plurals
    if t.endswith("ies") and len(t) >= 5:
        t = t[:-3] + "y"
    elif t.endswith("sses"):
        t = t[:-2]
    elif t.endswith("s") and not (t.endswith("ss") or t.endswith("us") or t.endswith("is")):
        t = t[:-1]
    # step 2: -ing / -ed
    if len(t) >= 5:
        if t.endswith("ing") and len(t) - 3 >= 3 and has_vowel(t[:-3]):
            t = undouble(t[:-3])
        elif t.endswith("ed") and len(t) - 2 >= 3 and has_vowel(t[:-2]):
            t = undouble(t[:-2])
    # step 3: final -e
    if len(t) >= 4 and t.endswith("e"):
        t = t[:-1]
    return t


_CACHE = {}


def tokenize(s, final):
    """final=False: plain tokenizer (baseline). final=True: + stopwords + stemmer."""
    toks = []
    for r in RUN_RE.findall(s):
        key = (r, final)
        v = _CACHE.get(key)
        if v is None:
            v = []
            for piece in split_run(r):
                t = ascii_lower(piece)
                if final:
                    if t in STOPWORDS:
                        continue
                    t = stem(t)
                v.append(t)
            _CACHE[key] = v
        toks.extend(v)
    return toks


# --------------------------------------------------------------------------- fields
def walk_props(schema, names, descs, enums):
    props = schema.get("properties")
    if not isinstance(props, dict):
        return
    for k in sorted(props):
        v = props[k]
        names.append(k)
        if isinstance(v, dict):
            if isinstance(v.get("description"), str):
                descs.append(v["description"])
            if isinstance(v.get("enum"), list):
                enums.extend(e if isinstance(e, str) else json.dumps(e) for e in v["enum"])
            walk_props(v, names, descs, enums)
            if isinstance(v.get("items"), dict):
                walk_props(v["items"], names, descs, enums)


def doc_text(tool, final):
    names, descs, enums = [], [], []
    walk_props(tool["parameters"], names, descs, enums)
    parts = [tool["name"], tool["description"]] + names + descs
    if final:
        parts += enums
    return parts


# ----------------------------------------------------------------------------- BM25
class BM25:
    def __init__(self, tools, final):
        self.final = final
        self.k1 = 1.2
        self.b = 0.5 if final else 0.75
        self.tools = tools
        tfs, self.dl = [], []
        for t in tools:
            tf = {}
            n = 0
            for part in doc_text(t, final):
                for tok in tokenize(part, final):
                    tf[tok] = tf.get(tok, 0) + 1
                    n += 1
            tfs.append(tf)
            self.dl.append(n)
        N = len(tools)
        avgdl = sum(self.dl) / N
        post = {}
        for d, tf in enumerate(tfs):
            for tok, c in tf.items():
                post.setdefault(tok, []).append((d, c))
        k1, b = self.k1, self.b
        self.post = {}
        for tok, p in post.items():
            df = len(p)
            idf = math.log((N - df + 0.5) / (df + 0.5) + 1.0)
            self.post[tok] = [(d, idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * self.dl[d] / avgdl)))
                              for d, tf in p]
        order = sorted(range(N), key=lambda i: (tools[i]["name"], i))
        self.rank = [0] * N
        for r, i in enumerate(order):
            self.rank[i] = r

    def search(self, query, k=10):
        qt = tokenize(query, self.final)
        if self.final:  # unique query terms, first-occurrence order
            seen, uq = set(), []
            for t in qt:
                if t not in seen:
                    seen.add(t)
                    uq.append(t)
            qt = uq
        sc = {}
        for t in qt:
            for d, w in self.post.get(t, ()):
                sc[d] = sc.get(d, 0.0) + w
        rank = self.rank
        return heapq.nsmallest(k, sc.items(), key=lambda x: (-x[1], rank[x[0]]))


# ----------------------------------------------------------------------- evaluation
def split_of(qid):
    return "dev" if hashlib.sha256(qid.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def evaluate(engine, queries, tools_full):
    """Returns {'name': (r1, r5, r10, mrr), 'exact': (...)}.
    name : hit = a retrieved doc whose name equals the ground-truth name (primary).
    exact: hit = the retrieved doc is the exact ground-truth definition."""
    acc = {"name": [0.0] * 4, "exact": [0.0] * 4}
    T = engine.tools
    for q in queries:
        gold = q["relevant"][0]
        gname = tools_full[gold]["name"]
        res = engine.search(q["text"], 10)
        ranks = {
            "name": next((i + 1 for i, (d, _) in enumerate(res) if T[d]["name"] == gname), None),
            "exact": next((i + 1 for i, (d, _) in enumerate(res) if d == gold), None),
        }
        for m, r in ranks.items():
            if r:
                a = acc[m]
                a[0] += r <= 1
                a[1] += r <= 5
                a[2] += r <= 10
                a[3] += 1.0 / r
    n = len(queries)
    return {m: tuple(x / n for x in a) for m, a in acc.items()}


def distractor_digest(dis):
    """sha256 (first 16 hex) over, per distractor in order, the UTF-8 bytes of
    name TAB description TAB property keys (insertion order, comma-joined) TAB required (comma-joined) LF."""
    h = hashlib.sha256()
    for d in dis:
        p = d["parameters"]
        line = "\t".join([d["name"], d["description"], ",".join(p["properties"]), ",".join(p["required"])]) + "\n"
        h.update(line.encode("utf-8"))
    return h.hexdigest()[:16]


GOLDEN_IDS = ["simple_python_0", "simple_python_100", "simple_java_0", "simple_javascript_0",
              "multiple_0", "multiple_100", "live_simple_0-0-0", "live_simple_100-59-1",
              "live_multiple_0-0-0", "live_multiple_500-148-10", "live_multiple_1000-231-0"]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    data = json.load(open(args[0], encoding="utf-8"))
    tools, queries = data["tools"], data["queries"]
    dis = make_distractors(tools)
    big = tools + dis
    if "--dump-distractors" in args:
        with open(args[args.index("--dump-distractors") + 1], "w", encoding="utf-8") as f:
            json.dump(dis, f, ensure_ascii=False, indent=1)
        return
    if "--query" in args:
        eng = BM25(big if "--10k" in args else tools, True)
        for d, s in eng.search(args[args.index("--query") + 1], 10):
            print(f"{s:.4f}  {eng.tools[d]['name']}  (#{d})")
        return
    print(f"tools {len(tools)}  distractors {len(dis)}  distractor digest {distractor_digest(dis)}")
    print("first distractor names:", ", ".join(d["name"] for d in dis[:5]))
    splits = {"dev": [q for q in queries if split_of(q["id"]) == "dev"],
              "test": [q for q in queries if split_of(q["id"]) == "test"]}
    print(f"queries {len(queries)}  dev {len(splits['dev'])}  test {len(splits['test'])}\n")
    hdr = "| method | corpus | split | R@1 | R@5 | R@10 | MRR | exact R@5 |"
    print(hdr)
    print("|" + "---|" * 8)
    for label, final in (("plain BM25", False), ("final", True)):
        for cname, corpus in (("full", tools), ("10k", big)):
            eng = BM25(corpus, final)
            for sname in ("dev", "test"):
                e = evaluate(eng, splits[sname], tools)
                r = e["name"]
                print(f"| {label} | {cname} ({len(corpus)}) | {sname} | {r[0]:.4f} | {r[1]:.4f} | "
                      f"{r[2]:.4f} | {r[3]:.4f} | {e['exact'][1]:.4f} |", flush=True)
    print("\nGolden cases (final method, full corpus): id | query | top-3 name #tool-index (score)")
    eng = BM25(tools, True)
    byid = {q["id"]: q for q in queries}
    for qid in GOLDEN_IDS:
        q = byid[qid]
        top = eng.search(q["text"], 3)
        print(f"- {qid} | {json.dumps(q['text'][:120], ensure_ascii=False)} | "
              + "; ".join(f"{tools[d]['name']} #{d} ({s:.4f})" for d, s in top))


if __name__ == "__main__":
    main()
