"""Golden fidelity for SciCode against the nvidia-scicode wheel (SciCode's own code, installed --no-deps):

1. its ``process_hdf5_to_tuple`` and sr-bench's reader (``harness/scicode_h5.py``) read the same h5
   fixture — scalar, string, array, multi-value tuple, ``list`` group, csr/coo/bsr ``sparse_matrix``
   groups, a dict group — into equal values;
2. its ``extract_python_script`` and sr-bench's extraction agree on a corpus of replies;
3. step grading: its own generation code (``Gencode``, fed canned replies instead of a model) writes the
   step files and its own ``test_code`` grades them on this host; sr-bench composes the same files and
   grades them in the sandbox (each backend). Same file bodies, same pass/fail for every scored step
   (right, wrong, runtime error, timeout, syntax error, a helper outside the named function).
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.scicode_protocol import SciCodeAnswer, extract_code, step_scripts
from srbench.sandbox import scicode_data
from srbench.simulate import scicode_samples
from srbench.stages.grading.code import base_limits

from .conftest import backend_or_skip

h5py = pytest.importorskip("h5py", reason="the fidelity extra (h5py, scipy, sympy) is not installed")
np = pytest.importorskip("numpy")
sparse = pytest.importorskip("scipy.sparse")
BENCH = get("scicode")
TIMEOUT = 10


def _wheel_dir() -> Path:
    spec = importlib.util.find_spec("scicode")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the nvidia-scicode wheel is not installed (pip install --no-deps nvidia-scicode==26.3)")
    return Path(next(iter(spec.submodule_search_locations)))


# -- 1. the h5 reader ------------------------------------------------------------------------------
def _layouts(path: Path) -> dict[str, int]:
    """Every layout SciCode's file uses; returns {step id: number of tests}."""
    with h5py.File(path, "w") as f:
        f.create_dataset("1.1/test1/var1", data=3.25)                             # scalar float
        f.create_dataset("1.1/test2/var1", data=7)                                # scalar int
        f.create_dataset("1.1/test3/var1", data="a string")                       # bytes → str
        f.create_dataset("1.1/test4/var1", data=np.arange(12.0).reshape(3, 4))    # array
        f.create_dataset("1.1/test5/var1", data=np.array([True, False]))
        t = f.create_group("2.1/test1")                                           # several values → tuple
        t.create_dataset("var1", data=1.5)
        t.create_dataset("var2", data=np.array([1, 2, 3]))
        t.create_dataset("var3", data="label")
        lst = t.create_group("var4").create_group("list")
        for i, v in enumerate(([1.0], [1.0, 2.0], [3.0, 4.0, 5.0])):
            lst.create_dataset(f"var{i + 1}", data=np.array(v))
        lg = f.create_group("3.1/test1/var1/list")                                # one list group
        for i, v in enumerate((np.zeros((2, 2)), np.ones(3), 4.0)):
            lg.create_dataset(f"var{i + 1}", data=v)
        csr = sparse.csr_matrix(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]))
        coo = sparse.coo_matrix(np.array([[0, 0, 5.0], [6.0, 0, 0]]))
        bsr = sparse.bsr_matrix(np.arange(16.0).reshape(4, 4), blocksize=(2, 2))
        for k, (m, keys) in enumerate(((csr, ("indices", "indptr")), (coo, ("row", "col")),
                                       (bsr, ("indices", "indptr", "blocksize"))), 1):
            g = f.create_group(f"4.1/test{k}/var1/sparse_matrix")
            g.create_dataset("data", data=m.data)
            g.create_dataset("shape", data=m.shape)
            for key in keys:
                g.create_dataset(key, data=getattr(m, key))
        d = f.create_group("5.1/test1/var1")                                      # a dict group
        d.create_dataset("0.5", data=np.array([1.0, 2.0]))
        d.create_dataset("12", data=3)
        d.create_dataset("name", data="value")
        d.create_dataset("alpha", data=2.5)
        sm = d.create_group("matrix").create_group("sparse_matrix")
        for key in ("data", "indices", "indptr"):
            sm.create_dataset(key, data=getattr(csr, key))
        sm.create_dataset("shape", data=csr.shape)
    return {"1.1": 5, "2.1": 1, "3.1": 1, "4.1": 3, "5.1": 1}


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if sparse.issparse(a):
        return a.shape == b.shape and np.array_equal(a.toarray(), b.toarray())
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_the_h5_reader_equals_scicodes_on_every_layout(tmp_path: Path) -> None:
    _wheel_dir()
    upstream = importlib.import_module("scicode.parse.parse")
    spec = importlib.util.spec_from_file_location("srbench_scicode_h5", Path(scicode_data.__file__).parent
                                                  / "harness" / "scicode_h5.py")
    ours = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ours)
    path = tmp_path / "layouts.h5"
    seen = set()
    for step, n in _layouts(path).items():
        theirs = upstream.process_hdf5_to_tuple(step, n, h5py_file=path)
        mine = ours.process_hdf5_to_tuple(step, n, h5py_file=str(path))
        assert _same(theirs, mine), step
        seen |= {type(v).__name__ for v in mine}
    assert {"float64", "int64", "str", "ndarray", "tuple", "list", "csr_matrix", "coo_matrix", "bsr_matrix",
            "dict"} <= seen
    d = ours.process_hdf5_to_tuple("5.1", 1, h5py_file=str(path))[0]
    assert set(d) == {0.5, 12.0, "name", "alpha", "matrix"} and d["name"] == "value"
    with pytest.raises(KeyError):
        ours.process_hdf5_to_tuple("9.9", 1, h5py_file=str(path))


# -- 2. extraction -----------------------------------------------------------------------------------
def _upstream_extract() -> Any:
    source = (_wheel_dir() / "gen" / "models.py").read_text("utf-8")
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "extract_python_script")
    namespace: dict[str, Any] = {}
    exec(compile("import re\n" + ast.get_source_segment(source, node), "models.py", "exec"), namespace)  # noqa: S102
    return namespace["extract_python_script"]


REPLIES = [
    "Background first.\n```python\nimport numpy as np\ndef f(x):\n    return np.sum(x)\n```\nDone.",
    "```python\nfrom scipy import sparse\nfrom math import pi as PI\nx = 1\n```\n```python\ny = 2\n```",
    "```\ndef g():\n    return 1\n```",
    "no fences at all\nimport os\nz = 3",
    "```py\ndef h():\n    import math\n    return math.pi\n```",
    "```python\ndef k():\n    return '''import inside a string'''\n",
    "",
]


def test_extraction_equals_scicodes() -> None:
    upstream = _upstream_extract()
    for reply in REPLIES:
        assert extract_code(reply) == upstream(reply), reply


# -- 3. step grading ------------------------------------------------------------------------------------
RIGHT = {s["row"]["step_number"]: s["right"] for p in scicode_samples.PROBLEMS for s in p["steps"]}
WRONG = {s["row"]["step_number"]: s["wrong"] for p in scicode_samples.PROBLEMS for s in p["steps"]}
FENCE = "Background: simulated.\n```python\n{}\n```\n"
SCENARIOS = {     # model name → {step: reply}
    "sim-right": {k: FENCE.format("import numpy as np\n" + v) for k, v in RIGHT.items()},
    "sim-mixed": {**{k: FENCE.format(v) for k, v in RIGHT.items()},
                  "9001.2": FENCE.format("def scaled_norm(v, a):\n    raise ValueError('boom')"),
                  "9001.3": FENCE.format(WRONG["9001.3"]),
                  "9002.2": FENCE.format("def laplacian(n):\n    while True:\n        pass"),
                  "9002.4": FENCE.format("def weights(keys:\n    return {}")},
    "sim-helpers": {**{k: FENCE.format(v) for k, v in RIGHT.items()},
                    "9001.1": FENCE.format("def _mul(v, a):\n    return a * np.asarray(v, dtype=float)\n\n"
                                           "def scale(v, a):\n    return _mul(v, a)"),
                    "9002.1": "first\n```python\n" + RIGHT["9002.1"] + "\n```\nsecond\n```python\nraise SystemExit(3)\n```"},
}


def _upstream_modules(monkeypatch: pytest.MonkeyPatch, queue: list[str]) -> tuple[Any, Any]:
    """scicode.gen.gencode_json and scicode.__main__ with their model-client imports stubbed: the model is
    `queue` (replies in call order); everything else is the wheel's code."""
    _wheel_dir()
    models = types.ModuleType("scicode.gen.models")
    models.extract_python_script = _upstream_extract()
    models.get_model_function = lambda model, **kw: (lambda prompt: queue.pop(0))
    monkeypatch.setitem(sys.modules, "scicode.gen.models", models)
    monkeypatch.setitem(sys.modules, "omegaconf", types.SimpleNamespace(OmegaConf=None))
    for name in ("scicode.gen.gencode_json", "scicode.__main__"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    gen = importlib.import_module("scicode.gen.gencode_json")
    main = importlib.import_module("scicode.__main__")
    shim = types.SimpleNamespace(run=lambda *a, **k: subprocess.run(*a, **{**k, "timeout": TIMEOUT}),
                                 CalledProcessError=subprocess.CalledProcessError,
                                 TimeoutExpired=subprocess.TimeoutExpired)
    monkeypatch.setattr(main, "subprocess", shim)
    return gen, main


def _upstream_grades(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]],
                     h5: Path) -> tuple[dict[str, dict[str, bool]], dict[str, dict[str, str]]]:
    queue: list[str] = []
    gen, main = _upstream_modules(monkeypatch, queue)
    monkeypatch.setenv("DATA_CACHE_DIR", str(h5.parent))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":" + os.environ["PATH"])
    tmp_path.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(tmp_path)
    code_dir, passed, files = tmp_path / "generated", {}, {}
    for model, replies in SCENARIOS.items():
        base = gen.Gencode(model=model, output_dir=code_dir, prompt_dir=tmp_path / "prompts", with_background=False)
        for row in rows:
            gc = copy.deepcopy(base)         # as upstream: one copy per problem, its steps in order
            steps = row["sub_steps"]
            for i in range(len(steps)):
                queue.append(replies[steps[i]["step_number"]])
                gc.generate_response_with_steps(row, i + 1, len(steps), model, gen.DEFAULT_PROMPT_TEMPLATE)
        assert not queue
        out = tmp_path / "results"
        main.test_code(model, code_dir, tmp_path / "logs", out, rows, False, n_samples=1, eval_threads=2)
        counts = json.loads((out / f"{model}_without_background.json").read_text())["num_correct"]
        passed[model] = {f"{row['problem_id']}.{k}": counts.get(row["problem_id"], {}).get(str(k), 0) == 1
                         for row in rows for k in range(1, len(row["sub_steps"]) + 1)}
        files[model] = {p.stem.split("_")[0]: p.read_text("utf-8")
                        for p in (code_dir / model / "without_background").glob("*.py")}
    return passed, files


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """The fixture source and SciCode's own grades of every scenario (computed once for both backends)."""
    _wheel_dir()
    tmp = tmp_path_factory.mktemp("scicode-upstream")
    root = scicode_samples.write_scicode(tmp / "src")
    with pytest.MonkeyPatch.context() as mp:
        theirs, files = _upstream_grades(tmp / "run", mp, scicode_samples.rows(), root / "test_data.h5")
    return root, theirs, files


@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_step_grading_equals_scicodes(upstream, monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    sandbox = backend_or_skip(backend)
    root, theirs, upstream_files = upstream
    h5 = root / "test_data.h5"
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(h5))
    options = BENCH.options({"step_timeout_s": TIMEOUT, "test_data_sha256": scicode_data.file_sha256(h5)})
    cases = BENCH.load({"problems_test.jsonl": (root / "problems_test.jsonl").read_bytes()}, seed=1, revision="x")
    limits = base_limits(options)
    mounts = BENCH.mounts(options, sandbox.receipt(limits))
    verdicts_seen = set()
    for model, replies in SCENARIOS.items():
        for case in cases:
            texts = [replies[s["step_number"]] for s in case.answer["steps"]]
            for item in step_scripts(SciCodeAnswer.model_validate(case.answer), texts):            # the same file bodies as upstream's
                if item is not None:
                    number, script = item
                    assert script.split("\n\nfrom scicode.parse.parse import")[0] == upstream_files[model][number]
            planned = BENCH.jobs(case, texts, options)
            run = limits.model_copy(update={"wall_s": TIMEOUT * len(planned.jobs) + 30})
            reports = sandbox.run_jobs([{"module": j.module, "input": j.input, "limits": run.child(j.wall_s)}
                                        for j in planned.jobs], run, mounts=mounts)
            grade = BENCH.judge(case, [BENCH.verdict({**r, "module": "script_child.py"}) for r in reports], planned)
            mine = {s["step"]: s["verdict"] == "passed" for s in grade.details["steps"]}
            verdicts_seen |= {s["verdict"] for s in grade.details["steps"]}
            assert mine == {k: theirs[model][k] for k in mine}, (model, case.id, grade.details["steps"])
            assert grade.correct == all(mine.values())
    assert all(theirs["sim-right"].values()) and all(theirs["sim-helpers"].values())
    assert not theirs["sim-mixed"]["9001.2"] and not theirs["sim-mixed"]["9002.2"]
    assert {"passed", "wrong_answer", "runtime_error", "time_limit"} <= verdicts_seen
