"""Golden fidelity: LiveCodeBench's own `run_test` (from the nvidia-livecodebench wheel, run on this
host in a fresh process per program because its guard disables `os`) and sr-bench's sandboxed grader
give the same verdict on every program of one corpus; plus the native loader and the extraction."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from srbench.benchmarks.livecodebench import LiveCodeBench, decode_private, extract_code, row_to_case
from srbench.simulate.samples import _lcb_private, write_livecodebench
from srbench.stages.grading.code import base_limits

STDIN_TESTS = [("3\n1 2 3\n", "6\n"), ("2\n10 -4\n", "6\n")]
AVG_TESTS = [("2\n1 2\n", "1.5\n"), ("4\n1 1 1 2\n", "1.25\n")]
FN_TESTS = [("[2, 7, 11, 15]\n9", "[0, 1]"), ("[3, 2, 4]\n6", "[1, 2]")]
SUM = "n = int(input())\nprint(sum(map(int, input().split())))\n"
PAIR = ("class Solution:\n    def pairSum(self, nums, target):\n        seen = {}\n"
        "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
        "                return [seen[target - x], i]\n            seen[x] = i\n")
CORPUS = [
    ("correct stdin", SUM, STDIN_TESTS, None),
    ("wrong answer", "input()\nprint(0)\n", STDIN_TESTS, None),
    ("float written longer", "input()\nxs = list(map(int, input().split()))\nprint(f'{sum(xs)/len(xs):.2f}')\n",
     AVG_TESTS, None),
    ("float rounded", "input()\nxs = list(map(int, input().split()))\nprint(round(sum(xs)/len(xs), 1))\n",
     AVG_TESTS, None),
    ("extra whitespace", "n = int(input())\nprint('  ', sum(map(int, input().split())), '   \\n\\n')\n",
     STDIN_TESTS, None),
    ("extra line", SUM + "print()\nprint('extra')\n", STDIN_TESTS, None),
    ("infinite loop", "while True:\n    pass\n", STDIN_TESTS, None),
    ("runtime error", "n = int(input())\nprint(1 // (n - n))\n", STDIN_TESTS, None),
    ("syntax error", "def broken(:\n    pass\n", STDIN_TESTS, None),
    ("main guard and exit", "import sys\ndef main():\n    n = int(input())\n    print(sum(map(int, input().split())))\n"
     "    sys.exit(0)\nif __name__ == '__main__':\n    main()\n", STDIN_TESTS, None),
    ("open(0) reader", "data = open(0).read().split()\nprint(sum(map(int, data[1:])))\n", STDIN_TESTS, None),
    ("stdin.buffer reader", "import sys\ndata = sys.stdin.buffer.read().split()\nprint(sum(map(int, data[1:])))\n",
     STDIN_TESTS, None),
    ("functional correct", PAIR, FN_TESTS, "pairSum"),
    ("functional tuple", PAIR.replace("return [seen[target - x], i]", "return (seen[target - x], i)"), FN_TESTS,
     "pairSum"),
    ("functional wrong", "class Solution:\n    def pairSum(self, nums, target):\n        return [0, 0]\n", FN_TESTS,
     "pairSum"),
    ("functional missing method", "class Solution:\n    def other(self):\n        return 1\n", FN_TESTS, "pairSum"),
    ("functional loop at load", "while True:\n    pass\nclass Solution:\n    pass\n", FN_TESTS, "pairSum"),
]
TIMEOUT = 2


def _upstream_testing_util() -> Path:
    spec = importlib.util.find_spec("livecodebench")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the nvidia-livecodebench wheel is not installed (pip install --no-deps nvidia-livecodebench==26.3)")
    path = Path(next(iter(spec.submodule_search_locations))) / "evaluation" / "testing_util.py"
    if not path.is_file():
        pytest.skip(f"{path} is missing from the installed wheel")
    return path


_DRIVER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("lcb_testing_util", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
job = json.loads(sys.stdin.read())
sample = {"input_output": json.dumps({"inputs": job["inputs"], "outputs": job["outputs"], "fn_name": job["fn"]})}
res, meta = mod.run_test(sample, test=job["code"], timeout=job["timeout"])
out = [r if isinstance(r, bool) else int(r) for r in res]
sys.__stdout__.write("\\nUPSTREAM " + json.dumps({"res": out, "code": meta.get("error_code")}) + "\\n")
"""


def upstream_verdict(path: Path, code: str, tests: list[tuple[str, str]], fn: str | None) -> str:
    job = {"code": code, "inputs": [i for i, _ in tests], "outputs": [o for _, o in tests], "fn": fn,
           "timeout": TIMEOUT}
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(path)], input=json.dumps(job), capture_output=True,
                          text=True, timeout=60)
    line = [x for x in done.stdout.splitlines() if x.startswith("UPSTREAM ")][-1]
    got = json.loads(line[len("UPSTREAM "):])
    res = got["res"]
    if len(res) == len(tests) and all(r is True for r in res):
        return "passed"
    last = res[-1] if res else -4
    return {False: "wrong_answer", -2: "wrong_answer", -3: "time_limit", -4: "runtime_error"}.get(last, "failed")


def native_row(tests: list[tuple[str, str]], fn: str | None, *, pickled: bool = False) -> dict:
    kind = "functional" if fn else "stdin"
    return {"question_title": "t", "question_content": "q", "platform": "leetcode" if fn else "atcoder",
            "question_id": "golden", "contest_id": "c", "contest_date": "2025-01-01T00:00:00",
            "starter_code": "class Solution:\n    pass" if fn else "", "difficulty": "easy",
            "public_test_cases": json.dumps([{"input": i, "output": o, "testtype": kind} for i, o in tests[:1]]),
            "private_test_cases": _lcb_private(tests[1:], kind, pickled),
            "metadata": json.dumps({"func_name": fn} if fn else {})}


def srbench_verdict(sandbox, code: str, tests: list[tuple[str, str]], fn: str | None) -> str:
    bench = LiveCodeBench()
    case = row_to_case(native_row(tests, fn, pickled=True), "golden", "r")
    options = bench.options({"test_timeout_s": TIMEOUT, "memory_mb": 512})
    reply = f"Here it is:\n```python\n{code}```\nDone."
    planned = bench.jobs(case, [reply], options)
    limits = base_limits(options)
    reports = sandbox.run_jobs([{"module": j.module, "input": j.input, "limits": limits.child(j.wall_s)}
                                for j in planned.jobs], limits.model_copy(update={"wall_s": 60}))
    grade = bench.judge(case, [bench.verdict({**reports[0], "module": planned.jobs[0].module})], planned)
    return grade.details["verdict"]


@pytest.mark.parametrize("name, code, tests, fn", CORPUS, ids=[c[0] for c in CORPUS])
def test_sr_bench_grades_like_livecodebench(sandbox, name: str, code: str, tests, fn) -> None:
    want = upstream_verdict(_upstream_testing_util(), code, tests, fn)
    assert srbench_verdict(sandbox, code, tests, fn) == want, name


def test_the_corpus_covers_every_verdict() -> None:
    path = _upstream_testing_util()
    seen = {upstream_verdict(path, code, tests, fn) for _, code, tests, fn in CORPUS}
    assert seen == {"passed", "wrong_answer", "time_limit", "runtime_error"}


def test_extraction_takes_the_first_fenced_block() -> None:
    assert extract_code("a\n```python\nprint(1)\n```\ntext\n```python\nprint(2)\n```") == "print(1)"
    assert extract_code("no fences") == "" and extract_code("```python\nprint(1)") == "" and extract_code(None) == ""


def test_native_loader_reads_both_private_test_forms(tmp_path: Path) -> None:
    root = write_livecodebench(tmp_path / "lcb")
    bench = LiveCodeBench()
    files = {k: v.read_bytes() for k, v in bench.locate(root).items()}
    assert sorted(files) == ["test.jsonl", "test6.jsonl"]
    cases = bench.load(files, seed=1, revision="r")
    by = {c.metadata.task_id: c for c in cases}
    assert by["synth-pairsum"].answer["mode"] == "functional" and by["synth-pairsum"].answer["fn_name"] == "pairSum"
    assert len(by["synth-pairsum"].answer["tests"]) == 3         # 1 public + 2 pickled private
    assert by["synth-avg"].metadata.stratum == "easy" and by["synth-lines"].metadata.stratum == "hard"
    assert "starter code" in by["synth-pairsum"].messages[1].content
    assert "Read the inputs from stdin" in by["synth-avg"].messages[1].content


def test_pickled_private_tests_never_run_code() -> None:
    import base64
    import pickle
    import zlib

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))
    blob = base64.b64encode(zlib.compress(pickle.dumps(Evil()))).decode()
    with pytest.raises(Exception, match="refused global"):
        decode_private(blob, "row 1")
    assert decode_private(_lcb_private([("1\n", "2\n")], "stdin", True), "row 2")[0].output == "2\n"
