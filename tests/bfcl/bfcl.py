"""BFCL's single-turn categories for the BFCL bench (tests/benches/bfcl.rs).

    bfcl.py extract WHEEL OUT.json PER_CATEGORY
    bfcl.py check WHEEL RESULTS.json
    bfcl.py selftest WHEEL

`extract` reads the public Berkeley Function-Calling Leaderboard data from the `bfcl-eval` wheel
(the one tests/search/setup.sh downloads and checks by sha256; never installed) and writes, for
each category (simple = simple_python, multiple, parallel, parallel_multiple, irrelevance),
PER_CATEGORY questions taken at even steps through the category (not its first ones: the
categories are ordered by topic). Each question carries its messages, its functions as JSON
Schema (BFCL writes `dict`, `float`, `tuple`, `any`; JSON Schema says `object`, `number`,
`array` and no type; names with dots get underscores, as BFCL does for APIs whose tool names
cannot hold a dot) and its ground truth.

`check` scores a run with BFCL's own AST checker (`bfcl_eval/eval_checker/ast_eval/
ast_checker.py`, imported from the wheel's files). The checker imports BFCL's model table only
to ask whether a model's tool names had their dots replaced; that table imports every provider
SDK, so it is replaced by a table that answers "yes" for every model (our names do). Irrelevance
is scored as BFCL scores it: right when the model made no call. Prints one JSON object: for each
condition and category, the questions right and the questions asked, and the ids that failed.

`selftest` proves the scoring both ways on every category (tests/search/bfcl_checker.rs, in CI):
calls built from the ground truth score right, and no call, a call of another name or a changed
argument score wrong (no call is right only for irrelevance).
"""
import json
import os
import sys
import tempfile
import types
import zipfile

CATEGORIES = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
}

TYPES = {"dict": "object", "float": "number", "tuple": "array"}


def schema(node):
    """BFCL's parameter types as JSON Schema, recursively."""
    if isinstance(node, list):
        return [schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = TYPES.get(value, value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: schema(v) for name, v in value.items()}
        elif key == "optional":
            continue
        else:
            out[key] = schema(value)
    return out


def read_lines(z, name):
    with z.open(name) as f:
        return [json.loads(line) for line in f.read().decode("utf-8").splitlines() if line]


def extract(wheel, out, per_category):
    result = {}
    with zipfile.ZipFile(wheel) as z:
        for short, file in CATEGORIES.items():
            questions = read_lines(z, f"bfcl_eval/data/BFCL_v4_{file}.json")
            answers = {}
            if short != "irrelevance":
                for a in read_lines(z, f"bfcl_eval/data/possible_answer/BFCL_v4_{file}.json"):
                    answers[a["id"]] = a["ground_truth"]
            n = min(per_category, len(questions))
            picked = [questions[(i * len(questions)) // n] for i in range(n)]
            result[short] = [
                {
                    "id": q["id"],
                    "messages": q["question"][0],
                    "functions": [
                        {
                            "name": f["name"].replace(".", "_"),
                            "description": f.get("description", ""),
                            "parameters": schema(f["parameters"]),
                        }
                        for f in q["function"]
                    ],
                    "original_functions": q["function"],
                    "ground_truth": answers.get(q["id"]),
                }
                for q in picked
            ]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f)


def load_checker(wheel):
    """BFCL's AST checker from the wheel's own files, with the model table replaced."""
    root = tempfile.mkdtemp(prefix="bfcl-")
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(("bfcl_eval/eval_checker/ast_eval/", "bfcl_eval/constants/")) or (
                name in ("bfcl_eval/__init__.py", "bfcl_eval/eval_checker/__init__.py")
            ):
                z.extract(name, root)
    for package in ("bfcl_eval", "bfcl_eval/eval_checker"):
        init = os.path.join(root, package, "__init__.py")
        if not os.path.exists(init):
            open(init, "w").close()
    sys.path.insert(0, root)

    class DotsReplaced:
        underscore_to_dot = True

    class EveryModel(dict):
        def __missing__(self, key):
            return DotsReplaced()

    table = types.ModuleType("bfcl_eval.constants.model_config")
    table.MODEL_CONFIG_MAPPING = EveryModel()
    sys.modules["bfcl_eval.constants.model_config"] = table
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker, Language.PYTHON


def check(wheel, results_path):
    ast_checker, python = load_checker(wheel)
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    questions = {}
    for category, items in results["questions"].items():
        for q in items:
            questions[q["id"]] = (category, q)
    report = {}
    for condition, runs in results["runs"].items():
        scores = report.setdefault(condition, {})
        for run in runs:
            category, q = questions[run["id"]]
            score = scores.setdefault(category, {"right": 0, "asked": 0, "failed": []})
            score["asked"] += 1
            calls = [{c["name"]: c["arguments"]} for c in run["calls"]]
            if category == "irrelevance":
                right = not calls
            elif not calls:
                right = False
            else:
                try:
                    verdict = ast_checker(
                        q["original_functions"],
                        calls,
                        q["ground_truth"],
                        python,
                        CATEGORIES[category],
                        "agent-toolkit",
                    )
                    right = bool(verdict["valid"])
                except Exception:  # a malformed output the checker cannot take: wrong
                    right = False
            if right:
                score["right"] += 1
            else:
                score["failed"].append(run["id"])
    print(json.dumps(report))


def first_accepted(options):
    """A value the ground truth accepts: its first option, nested dicts taken the same way."""
    value = options[0]
    if isinstance(value, dict):
        return {k: first_accepted(v) for k, v in value.items() if v and v[0] != ""}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [{k: first_accepted(v) for k, v in d.items() if v and v[0] != ""} for d in value]
    return value


def truth_calls(ground_truth):
    calls = []
    for expected in ground_truth or []:
        ((name, args),) = expected.items()
        arguments = {}
        for param, options in args.items():
            given = [o for o in options if o != ""]
            if not given:
                continue  # "" alone: leaving it out is what the ground truth accepts
            arguments[param] = first_accepted(given)
        calls.append({"name": name.replace(".", "_"), "arguments": arguments})
    return calls


def changed(calls):
    """The same calls with one argument's value changed to one no ground truth accepts."""
    out = json.loads(json.dumps(calls))
    for call in out:
        for param, value in call["arguments"].items():
            if isinstance(value, bool):
                continue  # the ground truth often accepts both
            elif isinstance(value, list):
                call["arguments"][param] = value + ["zzq"]
            elif isinstance(value, (int, float)):
                call["arguments"][param] = value + 7919
            elif isinstance(value, str):
                call["arguments"][param] = value + " zzq"
            else:
                continue
            return out
    return None


def selftest(wheel):
    import io
    from contextlib import redirect_stdout

    with tempfile.TemporaryDirectory() as tmp:
        questions_path = os.path.join(tmp, "questions.json")
        extract(wheel, questions_path, 20)
        with open(questions_path, encoding="utf-8") as f:
            questions = json.load(f)
        runs = {"truth": [], "none": [], "other_name": [], "changed": []}
        expect = {name: {} for name in runs}
        for category, items in questions.items():
            relevant = category != "irrelevance"
            for q in items:
                truth = truth_calls(q["ground_truth"])
                runs["truth"].append({"id": q["id"], "calls": truth})
                runs["none"].append({"id": q["id"], "calls": []})
                runs["other_name"].append(
                    {"id": q["id"], "calls": [{"name": "not_offered", "arguments": {}}]}
                )
                expect["truth"][q["id"]] = True
                expect["none"][q["id"]] = not relevant
                expect["other_name"][q["id"]] = False
                wrong = changed(truth) if relevant else None
                if wrong is not None:
                    runs["changed"].append({"id": q["id"], "calls": wrong})
                    expect["changed"][q["id"]] = False
        results_path = os.path.join(tmp, "runs.json")
        with open(results_path, "w", encoding="utf-8") as f:
            json.dump({"questions": questions, "runs": runs}, f)
        out = io.StringIO()
        with redirect_stdout(out):
            check(wheel, results_path)
        report = json.loads(out.getvalue())
    wrong_verdicts = []
    for condition, verdicts in expect.items():
        failed = {i for s in report.get(condition, {}).values() for i in s["failed"]}
        for qid, right in verdicts.items():
            if right == (qid in failed):
                wrong_verdicts.append(f"{condition}/{qid}: expected {'right' if right else 'wrong'}")
    # Ground-truth options this conversion cannot express (an empty list, a value only the
    # checker's own normalisation accepts) would show here; none does in these questions.
    if wrong_verdicts:
        sys.exit("the scoring is off:\n" + "\n".join(wrong_verdicts))
    asked = sum(len(v) for v in expect.values())
    print(f"selftest: {asked} verdicts as expected over {len(expect['truth'])} questions")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "extract":
        extract(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "selftest":
        selftest(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
