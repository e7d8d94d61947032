"""A synthetic SciCode source in the native layout, for the demo and the tests (clearly labelled).

``write_scicode(root)`` writes ``problems_test.jsonl`` (two main problems in SciCode's row format: one
step calls an earlier step's function, one step has no test cases like SciCode's provided steps) and
``test_data.h5`` in SciCode's layout (``<step>/test<k>`` groups holding ``var1``…: a scalar, arrays, a
multi-value tuple, a ``list`` group, a ``sparse_matrix`` group and a dict group). ``answer_key()``
maps each step's user turn to a right and a wrong simulated solution, so the simulated models answer
every step of the conversation. Writing the h5 file needs h5py (``sr-bench[bench]``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from srbench.benchmarks.scicode_protocol import step_prompt, system_prompt
from srbench.schemas.wire import WireJSON
from srbench.simulate.behaviour import messages_key

SAMPLE_REVISION = "synthetic-sample-v1"
CMP = "from scicode.compare.cmp import cmp_tuple_or_list\n"
DICTS = "from scicode.compare.cmp import are_dicts_close\n"


def _step(number: str, header: str, ret: str | None, description: str, tests: list[str],
          right: str, wrong: str, targets: list[Any]) -> WireJSON:
    return {"row": {"step_number": number, "step_description_prompt": f"[synthetic sample] {description}",
                    "step_background": "", "function_header": header, "return_line": ret, "test_cases": tests},
            "right": right, "wrong": wrong, "targets": targets}


# each target: ("array", values) | ("scalar", x) | ("tuple", [target…]) | ("list", [values…])
#              | ("csr", data, indices, indptr, shape) | ("dict", {key: value}) | ("str", text)
PROBLEMS: list[WireJSON] = [
    {"problem_id": "9001", "problem_name": "[synthetic sample] scaled vectors", "deps": "import numpy as np",
     "steps": [
         _step("9001.1", "def scale(v, a):\n    '''Multiply the vector v by the number a.'''", "    return out",
               "Write `scale(v, a)`, the vector v times a, as a numpy array.",
               ["assert np.allclose(scale([1, 2, 3], 2.0), target)", "assert np.allclose(scale([0.5], -1.0), target)"],
               "def scale(v, a):\n    out = a * np.asarray(v, dtype=float)\n    return out",
               "def scale(v, a):\n    out = a + np.asarray(v, dtype=float)\n    return out",
               [("array", [2.0, 4.0, 6.0]), ("array", [-0.5])]),
         _step("9001.2", "def scaled_norm(v, a):\n    '''The Euclidean norm of scale(v, a).'''", "    return n",
               "Using `scale`, write `scaled_norm(v, a)`.",
               ["assert np.allclose(scaled_norm([3, 4], 2.0), target)"],
               "def scaled_norm(v, a):\n    n = float(np.linalg.norm(scale(v, a)))\n    return n",
               "def scaled_norm(v, a):\n    n = float(np.sum(scale(v, a)))\n    return n",
               [("scalar", 10.0)]),
         _step("9001.3", "def summary(v):\n    '''(mean of v, index of its largest entry).'''", "    return mean, where",
               "Write `summary(v)`: the mean and the arg-max of v.",
               [CMP + "assert cmp_tuple_or_list(summary([1, 5, 2]), target)"],
               "def summary(v):\n    mean, where = float(np.mean(v)), int(np.argmax(v))\n    return mean, where",
               "def summary(v):\n    mean, where = float(np.median(v)), int(np.argmin(v))\n    return mean, where",
               [("tuple", [("scalar", 8.0 / 3.0), ("scalar", 1)])]),
     ]},
    {"problem_id": "9002", "problem_name": "[synthetic sample] structures",
     "deps": "import numpy as np\nfrom scipy import sparse",
     "steps": [
         _step("9002.1", "def ragged(n):\n    '''[arange(1), …, arange(n)].'''", "    return out",
               "Write `ragged(n)`, the list of the ranges of length 1 to n.",
               ["out = ragged(3)\nassert len(out) == len(target) and all(np.allclose(a, b) for a, b in zip(out, target))"],
               "def ragged(n):\n    out = [np.arange(k + 1) for k in range(n)]\n    return out",
               "def ragged(n):\n    out = [np.arange(k) for k in range(n)]\n    return out",
               [("list", [[0], [0, 1], [0, 1, 2]])]),
         _step("9002.2", "def laplacian(n):\n    '''The n×n 1-D Laplacian (2 on the diagonal, -1 beside it), csr.'''",
               "    return m", "Write `laplacian(n)` as a scipy.sparse csr matrix.",
               ["assert np.allclose(laplacian(3).toarray(), target.toarray())"],
               "def laplacian(n):\n    m = sparse.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]).tocsr()\n"
               "    return m",
               "def laplacian(n):\n    m = sparse.identity(n, format='csr')\n    return m",
               [("csr", [2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0], [0, 1, 0, 1, 2, 1, 2], [0, 2, 5, 7], [3, 3])]),
         _step("9002.3", "def helper(x):\n    '''Given: returns x.'''", None,
               "This step's solution is provided (no test cases), like SciCode's provided steps.", [],
               "def helper(x):\n    return x", "def helper(x):\n    return x", []),
         _step("9002.4", "def weights(keys):\n    '''{key: float(len(key))} plus label 'w'.'''", "    return out",
               "Write `weights(keys)`.",
               [DICTS + "assert are_dicts_close(weights(['a', 'bb']), target)"],
               "def weights(keys):\n    out = {k: float(len(k)) for k in keys}\n    out['label'] = 'w'\n    return out",
               "def weights(keys):\n    out = {k: 1.0 for k in keys}\n    out['label'] = 'w'\n    return out",
               [("dict", {"a": 1.0, "bb": 2.0, "label": "w"})]),
     ]},
]


def rows() -> list[WireJSON]:
    """The problems as native rows (fresh copies)."""
    return json.loads(json.dumps(_rows()))


def _rows() -> list[WireJSON]:
    return [{"problem_name": p["problem_name"], "problem_id": p["problem_id"],
             "problem_description_main": f"{p['problem_name']}: not a real SciCode problem.",
             "problem_io": "", "required_dependencies": p["deps"], "sub_steps": [s["row"] for s in p["steps"]],
             "general_tests": [], "problem_background_main": ""} for p in PROBLEMS]


def _write(group: Any, name: str, target: tuple[Any, ...]) -> None:
    # deferred: numpy is heavy: imported only when this runs
    import numpy as np

    kind = target[0]
    if kind in ("array", "scalar"):
        group.create_dataset(name, data=np.asarray(target[1]) if kind == "array" else target[1])
    elif kind == "str":
        group.create_dataset(name, data=target[1])
    elif kind == "list":
        sub = group.create_group(name).create_group("list")
        for i, value in enumerate(target[1]):
            sub.create_dataset(f"var{i + 1}", data=np.asarray(value))
    elif kind == "csr":
        sub = group.create_group(name).create_group("sparse_matrix")
        for key, value in zip(("data", "indices", "indptr", "shape"), target[1:], strict=True):
            sub.create_dataset(key, data=np.asarray(value))
    elif kind == "dict":
        sub = group.create_group(name)
        for key, value in target[1].items():
            sub.create_dataset(key, data=value)
    else:
        raise ValueError(f"unknown sample target kind {kind!r}")


def write_h5(path: Path) -> Path:
    # deferred: h5py is heavy and optional: imported only when SciCode's test data is written
    import h5py

    with h5py.File(path, "w") as f:
        for p in PROBLEMS:
            for s in p["steps"]:
                for k, target in enumerate(s["targets"], 1):
                    group = f.create_group(f"{s['row']['step_number']}/test{k}")
                    if target[0] == "tuple":
                        for i, item in enumerate(target[1]):
                            _write(group, f"var{i + 1}", item)
                    else:
                        _write(group, "var1", target)
    return path


def write_scicode(root: Path, *, h5: bool = True) -> Path:
    """``problems_test.jsonl`` (and ``test_data.h5``) under `root`; returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "problems_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows()), "utf-8")
    if h5:
        write_h5(root / "test_data.h5")
    return root


def reply(code: str) -> str:
    return f"A simulated solution.\n```python\n# Background: simulated, not a real solution.\n{code}\n```\n"


def answer_key() -> WireJSON:
    """{the user turn of a step: {"scicode_step", "right", "wrong"}} for the simulated models, plus the
    first request of each problem by its messages digest (which would otherwise find the case's own
    grading answer first)."""
    key: WireJSON = {}
    for p in PROBLEMS:
        for i, s in enumerate(p["steps"]):
            entry = {"scicode_step": s["row"]["step_number"], "right": reply(s["right"]), "wrong": reply(s["wrong"])}
            key[step_prompt(s["row"])] = entry
            if i == 0:
                key[messages_key([{"role": "system", "content": system_prompt(p["deps"])},
                                  {"role": "user", "content": step_prompt(s["row"])}])] = entry
    return key


def for_demo(root: Path) -> tuple[str, WireJSON]:
    """The demo's SciCode source: (source path, benchmark-options entry). The in-process service grades
    against this sample's test_data.h5 (SR_BENCH_SCICODE_TEST_DATA is set for this process), and the
    options name its sha256 instead of the real file's; ImportError without h5py."""
    # deferred: the sandbox package loads only when the demo writes SciCode's test data
    from srbench.sandbox.scicode_data import file_sha256

    src = write_scicode(root)
    os.environ["SR_BENCH_SCICODE_TEST_DATA"] = str(src / "test_data.h5")
    return str(src), {"test_data_sha256": file_sha256(src / "test_data.h5")}
