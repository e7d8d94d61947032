"""Bad input to the real service (RUN-1, DS-9, SVC-1): malformed manifests and bodies, wrong hashes,
mismatched profile/seed, oversize bodies, path traversal, huge numbers and NaN. Each is a clear 4xx (never a
5xx) with a JSON ``error.code``/``error.message``, and the store is unchanged afterwards (the set of files
under the store, their bytes, and the journal's row counts)."""

from __future__ import annotations

import copy
import http.client
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.helpers import REVISIONS, Api, manifest, single
from srbench.discovery import API_PREFIX

from .conftest import cli_env, run_cli, settled_snapshot, store_snapshot

DEAD_URL = "http://127.0.0.1:9/v1"          # nothing listens there: calls fail fast with connect_error
BODY_ROUTES = ("/targets", "/datasets/prepare", "/datasets/combine", "/plans", "/runs")
NAN_FIX = ("handlers.body accepts NaN/Infinity/1e999 (json.loads defaults): parse with "
           "json.loads(text, parse_constant=<raise ValueError>, parse_float=<float, raise if not finite>), and give "
           "schemas.plan.Limits model_config allow_inf_nan=False")


def _error(resp: httpx.Response, status: int | None = None, code: str | None = None) -> str:
    """Assert a clear client error: 4xx, upstream's JSON {"error": message, "code": code}; return the message."""
    assert 400 <= resp.status_code < 500, (resp.status_code, resp.text[:300])
    if status is not None:
        assert resp.status_code == status, (resp.status_code, resp.text[:300])
    assert resp.headers.get("content-type", "").startswith("application/json"), resp.headers.get("content-type")
    data = resp.json()
    assert isinstance(data, dict) and {"error", "code"} <= set(data), data
    assert isinstance(data["code"], str) and data["code"], data
    assert isinstance(data["error"], str) and data["error"].strip(), data
    if code is not None:
        assert data["code"] == code, data
    return data["error"]


@pytest.fixture(scope="module")
def base(api: Api, service, dataset: dict[str, Any], sources: dict[str, Path]) -> dict[str, Any]:
    """A valid manifest, a finished run (its cells failed on a dead endpoint) and a second dataset of
    another seed; all made before any snapshot is taken."""
    api.ok("POST", "/targets", {"targets": [single("dead", DEAD_URL, "m")]})
    m = manifest(dataset, [{"id": "dead"}])
    plan = api.ok("POST", "/plans", {"manifest": m})["manifest"]
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    run = api.wait(run_id)
    assert run["status"] == "failed" and run["progress"]["failed"] == 14, run
    other = api.ok("POST", "/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "smoke", "seed": 7,
                                                 "source_path": str(sources["mmlu-pro"]),
                                                 "revision": REVISIONS["mmlu-pro"]})
    settled_snapshot(service.store_dir)                    # the run's final report is written after it ends
    return {"manifest": m, "plan": plan, "run_id": run_id, "dataset": dataset, "other": other}


@pytest.fixture
def unchanged(service, base) -> Iterator[None]:
    before = store_snapshot(service.store_dir)
    yield
    after = store_snapshot(service.store_dir)
    assert after["rows"] == before["rows"], (before["rows"], after["rows"])
    assert after["last"] == before["last"]
    assert after["files"] == before["files"], sorted(set(after["files"]) ^ set(before["files"]))


def _post(api: Api, path: str, content: bytes, ctype: str = "application/json") -> httpx.Response:
    return api.http.post(path, content=content, headers={"content-type": ctype})


# -- malformed manifests (POST /plans) ---------------------------------------------------------------------
def _edit(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def edit(m: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        node: Any = m
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[last] = value
        return m
    return edit


def _replace(value: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda m: value


MANIFESTS: dict[str, tuple[Callable[[dict[str, Any]], Any], list[str]]] = {
    "not a mapping: list": (_replace([{"version": "sr-bench-1.0"}]), ["must be a mapping"]),
    "not a mapping: string": (_replace("version: sr-bench-1.0"), ["must be a mapping"]),
    "not a mapping: number": (_replace(42), ["must be a mapping"]),
    "not a mapping: null": (_replace(None), ["must be a mapping"]),
    "empty mapping": (_replace({}), ["version", "profile", "seed", "dataset", "targets"]),
    "unknown top-level field": (_edit("temperature", 0.2), ["temperature", "unknown field"]),
    "unknown limits field": (_edit("limits.retries", 3), ["limits.retries", "unknown field"]),
    "unknown dataset field": (_edit("dataset.url", "http://x"), ["dataset.url", "unknown field"]),
    "wrong version": (_edit("version", "sr-bench-0.9"), ["version"]),
    "seed is a string": (_edit("seed", "twenty"), ["seed"]),
    "seed is a float": (_edit("seed", 1.5), ["seed"]),
    "seed is a bool": (_edit("seed", True), ["seed"]),
    "profile is a number": (_edit("profile", 5), ["profile"]),
    "profile unknown": (_edit("profile", "huge"), ["profile"]),
    "targets is a string": (_edit("targets", "dead"), ["targets"]),
    "targets empty": (_edit("targets", []), ["targets"]),
    "target entry is a number": (_edit("targets", [7]), ["targets[0]"]),
    "limits is a list": (_edit("limits", [1, 2]), ["limits"]),
    "concurrency is a string": (_edit("limits.concurrency", "many"), ["limits.concurrency"]),
    "concurrency negative": (_edit("limits.concurrency", -1), ["limits.concurrency"]),
    "dataset is a string": (_edit("dataset", "/tmp/x.jsonl"), ["dataset"]),
    "sha256 not hex": (_edit("dataset.sha256", "xyz"), ["dataset.sha256"]),
    "sha256 of other bytes": (_edit("dataset.sha256", "0" * 64), ["dataset.sha256", "0" * 64]),
    "sha256 upper case": (lambda m: _edit("dataset.sha256", m["dataset"]["sha256"].upper())(m), ["dataset.sha256"]),
    # a registered sha256 is read from the store (the path is only a hint); an unknown one from the path
    "dataset path missing": (lambda m: _edit("dataset.path", "/nonexistent/ds.jsonl")(_edit("dataset.sha256", "d" * 64)(m)),
                             ["dataset.path", "does not exist"]),
    "dataset path is the journal": (None, ["dataset.sha256", "does not match"]),       # filled in below
    "profile not the dataset's": (_edit("profile", "quick"), ["profile quick", "smoke"]),
    "seed not the dataset's": (_edit("seed", 7), ["seed 7", "does not match"]),
    "huge seed": (_edit("seed", 10 ** 30), ["seed"]),
    "huge concurrency": (_edit("limits.concurrency", 10 ** 30), ["limits.concurrency"]),
    "sampling temperature NaN": (_edit("sampling", {"temperature": float("nan")}), ["NaN"]),
    "idle timeout NaN": (_edit("limits.idle_timeout_s", float("nan")), ["NaN"]),
    "name empty": (_edit("name", ""), ["name"]),
    "name too long": (_edit("name", "n" * 10_000), ["name"]),
}


@pytest.mark.parametrize("case", list(MANIFESTS))
def test_malformed_manifest_is_a_clear_400(api, base, service, unchanged, case) -> None:
    edit, needles = MANIFESTS[case]
    m = copy.deepcopy(base["manifest"])
    if case == "dataset path is the journal":
        m["dataset"]["path"] = str(service.store_dir / "journal.sqlite3")
        m["dataset"]["sha256"] = "e" * 64
    else:
        m = edit(m)
    # allow_nan: the NaN cases send the NaN literal, as Python's and JavaScript's encoders may
    resp = _post(api, "/plans", json.dumps({"manifest": m}, allow_nan=True).encode())
    msg = _error(resp, 400, "invalid_input")
    for needle in needles:
        assert needle in msg, (case, needle, msg)
    assert "Traceback" not in msg and "pydantic" not in msg.lower(), msg


@pytest.mark.parametrize("limits", [{"total_timeout_s": "inf", "case_timeout_s": "inf", "max_run_seconds": "inf"},
                                    {"max_cost_usd": "inf"}], ids=["timeouts", "max_cost_usd"])
def test_infinite_limits_are_a_400(api, base, unchanged, limits) -> None:
    m = copy.deepcopy(base["manifest"])
    m["limits"].update({k: float(v) for k, v in limits.items()})
    _error(_post(api, "/plans", json.dumps({"manifest": m}).encode()), 400)


# -- YAML manifests through the CLI (`plan --manifest x.yaml`) ---------------------------------------------
YAML_BAD = {
    "garbage": ("version: [sr-bench\n  : : {", ["not valid YAML"]),
    "tabs and colons": ("version:\tsr-bench-1.0\n\t- : :\n", ["not valid YAML"]),
    "python tag": ("!!python/object/apply:os.system ['echo pwned']\n", ["not valid YAML"]),
    "a list": ("- version: sr-bench-1.0\n- seed: 1\n", ["must be a mapping"]),
    "a scalar": ("just a string\n", ["must be a mapping"]),
    "empty file": ("", ["must be a mapping"]),
    "unknown field": ("version: sr-bench-1.0\nprofile: smoke\nseed: 1\nretries: 3\n", ["retries", "unknown field"]),
}


def _plan_cli(service, tmp_path: Path, name: str, text: str) -> Any:
    path = tmp_path / f"{name.replace(' ', '-')}.yaml"
    path.write_text(text)
    out = tmp_path / "frozen.json"
    env = cli_env(SR_BENCH_URL=service.url, SR_BENCH_TOKEN=service.token)
    proc = run_cli(["plan", "--manifest", str(path), "--output", str(out)], tmp_path, env, timeout=30)
    assert not out.exists()
    return proc


@pytest.mark.parametrize("case", list(YAML_BAD))
def test_bad_yaml_manifest_is_one_clear_line(service, unchanged, tmp_path, case) -> None:
    text, needles = YAML_BAD[case]
    proc = _plan_cli(service, tmp_path, case, text)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr[-1500:])
    assert lines[0].startswith("error: ") and "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert service.token not in proc.stderr + proc.stdout


@pytest.mark.parametrize("text", ["version: sr-bench-1.0\nname: 2026-09-18\n", "version: sr-bench-1.0\nseed: .nan\n",
                                  "version: sr-bench-1.0\nname: !!binary aGVsbG8=\n",
                                  "version: sr-bench-1.0\nname: !!set {a, b}\n"],
                         ids=["date", "nan", "binary", "set"])
def test_yaml_values_json_cannot_hold_are_one_clear_line(service, unchanged, tmp_path, text) -> None:
    proc = _plan_cli(service, tmp_path, "non-json", text)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-800:]


# -- non-object and non-JSON bodies on every body route ----------------------------------------------------
BODIES: dict[str, tuple[bytes, str]] = {
    "not json": (b"not json", "application/json"),
    "truncated json": (b'{"manifest": {', "application/json"),
    "invalid utf-8": (b'{"manifest": "\xff\xfe"}', "application/json"),
    "empty": (b"", "application/json"),
    "json array": (b"[]", "application/json"),
    "json array of objects": (b'[{"manifest": {}, "plan": {}, "targets": []}]', "application/json"),
    "json string": (b'"manifest"', "application/json"),
    "json number": (b"42", "application/json"),
    "json null": (b"null", "application/json"),
    "NaN literal": (b"NaN", "application/json"),
    "int over 4300 digits": (b'{"seed": ' + b"9" * 5000 + b"}", "application/json"),
    "form encoded": (b"manifest=1&plan=2", "application/x-www-form-urlencoded"),
    "unknown field": (b'{"bogus": 1}', "application/json"),
}


@pytest.mark.parametrize("route", BODY_ROUTES)
@pytest.mark.parametrize("body", list(BODIES))
def test_non_object_body_is_a_clear_400(api, unchanged, route, body) -> None:
    content, ctype = BODIES[body]
    msg = _error(_post(api, route, content, ctype), 400)
    if body not in ("unknown field",):
        assert "JSON" in msg or "json" in msg, msg


@pytest.mark.parametrize("route", ("/plans", "/targets"))
def test_deeply_nested_json_is_a_400(api, unchanged, route) -> None:
    _error(_post(api, route, b"[" * 100_000 + b"]" * 100_000), 400)


@pytest.mark.parametrize("route", BODY_ROUTES)
def test_wrong_field_types_are_a_400(api, base, unchanged, route) -> None:
    bodies = {"/targets": [{"targets": "dead"}, {"targets": [{"id": "x", "kind": "single", "base_url": "ftp://x",
                                                                "model": "m"}]},
                           {"targets": [{"id": "../x", "kind": "single", "base_url": DEAD_URL, "model": "m"}]},
                           *({"targets": [{"id": "u", "kind": "single", "base_url": url, "model": "m"}]}
                             for url in ("http://exa mple.com/v1", "http://127.0.0.1:99999/v1", "http://h:port/v1",
                                         "http://h/v1\n", "http://h\x00/v1")),
                           {"targets": [{"id": "k", "kind": "single", "base_url": DEAD_URL, "model": "m",
                                         "api_key": "sk-should-never-be-stored"}]}],
              "/datasets/prepare": [{"benchmark": "mmlu-pro", "profile": "smoke", "seed": "1"},
                                    {"benchmark": ["mmlu-pro"], "profile": "smoke"},
                                    {"benchmark": "mmlu-pro", "profile": "smoke", "limit": 0},
                                    {"benchmark": "mmlu-pro", "profile": "bogus"},
                                    {"benchmark": "mmlu-pro", "profile": "smoke", "source_path": "/nonexistent"}],
              "/datasets/combine": [{"manifests": "x"}, {"manifests": [1, 2]}, {"manifests": []}],
              "/plans": [{"manifest": base["manifest"], "extra": 1}],
              "/runs": [{"manifest": []}, {"manifest": {"kind": "plan"}}, {"manifest": base["plan"], "idempotency_key": 5},
                        {"manifest": base["plan"], "idempotency_key": "k" * 500}]}[route]
    for b in bodies:
        resp = api.http.post(route, json=b)
        _error(resp)
        assert resp.status_code not in (401, 403)


def test_edited_plan_and_mismatched_combine_are_refused(api, base, unchanged) -> None:
    edited = copy.deepcopy(base["plan"])
    edited["limits"]["concurrency"] = 64
    _error(api.http.post("/runs", json={"manifest": edited}), 400, "reviewed_plan_changed")
    plan = copy.deepcopy(base["plan"])
    plan["plan_sha256"] = "0" * 64
    _error(api.http.post("/runs", json={"manifest": plan}), 400, "reviewed_plan_changed")
    # DS-9: sources with different seeds are rejected, never merged silently
    msg = _error(api.http.post("/datasets/combine", json={"manifests": [base["dataset"], base["other"]]}), 400)
    assert "seed" in msg, msg
    forged = dict(base["dataset"], sha256="0" * 64)
    _error(api.http.post("/datasets/combine", json={"manifests": [forged, base["other"]]}), 400)


def test_combine_with_non_string_ids_is_a_400(api, unchanged) -> None:
    _error(api.http.post("/datasets/combine", json={"manifests": [{"id": ["x"], "sha256": 1}, {"id": {}, "sha256": []}]}),
           400)


# -- oversize bodies ---------------------------------------------------------------------------------------
NINE_MIB = b'{"pad": "' + b"x" * (9 * 1024 * 1024) + b'"}'


@pytest.mark.parametrize("route", BODY_ROUTES)
def test_oversize_body_is_413_json(api, unchanged, route) -> None:
    _error(_post(api, route, NINE_MIB), 413, "too_large")


def test_oversize_chunked_body_is_413_json(api, unchanged) -> None:
    def chunks() -> Iterator[bytes]:
        for i in range(0, len(NINE_MIB), 1 << 20):
            yield NINE_MIB[i:i + (1 << 20)]
    resp = api.http.post("/plans", content=chunks(), headers={"content-type": "application/json"})
    assert "content-length" not in resp.request.headers and resp.request.headers["transfer-encoding"] == "chunked"
    _error(resp, 413, "too_large")


# -- huge numbers and NaN ----------------------------------------------------------------------------------
def test_query_numbers_out_of_range_are_a_400(api, base, unchanged) -> None:
    run, ds = base["run_id"], base["dataset"]["id"]
    for path in (f"/runs/{run}/calls?limit=0", f"/runs/{run}/calls?limit=501", f"/runs/{run}/calls?offset=-1",
                 f"/runs/{run}/results?limit=abc", f"/datasets/{ds}/cases?offset=1e3", f"/runs/{run}/events?after=x",
                 "/datasets?limit=99999999999999999999999"):
        _error(api.http.get(path), 400)
    # out of any page is an empty page, not an error
    for path in (f"/runs/{run}/results?offset=99999999999999999999999", f"/datasets/{ds}/cases?offset={10 ** 30}",
                 f"/datasets?offset={10 ** 30}"):
        resp = api.http.get(path)
        assert resp.status_code == 200, (path, resp.text[:200])


@pytest.mark.parametrize("query", ["calls?offset=99999999999999999999999", "events?after=99999999999999999999999"])
def test_huge_offsets_on_journal_pages_are_not_a_500(api, base, unchanged, query) -> None:
    resp = api.http.get(f"/runs/{base['run_id']}/{query}")
    assert resp.status_code < 500, resp.text[:200]


@pytest.mark.parametrize("field, number", [("price", b"Infinity"), ("price", b"1e999"), ("seed", b"NaN"),
                                           ("seed", b"Infinity")], ids=["price-Infinity", "price-1e999", "seed-NaN",
                                                                        "seed-Infinity"])
def test_non_finite_numbers_in_a_body_are_a_400(api, base, field, number) -> None:
    extra = (b'"prices": {"m": {"input": ' + number + b', "cached_input": 1, "cache_write": 1, "output": 1}}'
             if field == "price" else b'"request_params": {"seed": ' + number + b'}')
    body = (b'{"targets": [{"id": "inf", "kind": "single", "base_url": "' + DEAD_URL.encode() + b'", "model": "m", '
            + extra + b'}]}')
    try:
        _error(_post(api, "/targets", body), 400)
    finally:
        api.http.post("/targets", json={"targets": [single("inf", DEAD_URL, "m")]})   # leave no Infinity behind


# -- path traversal in artifact routes ---------------------------------------------------------------------
def _traversals(store_dir: Path) -> list[str]:
    zero = "b3:" + "0" * 64
    return [
        "/objects/../journal.sqlite3", "/objects/../../journal.sqlite3", "/objects/..%2fjournal.sqlite3",
        "/objects/b3:..%2f..", "/objects/b3:..%2f..%2fjournal.sqlite3", "/objects/b3%3A..%2F..%2Fstore.json",
        "/objects/%2e%2e%2f%2e%2e%2fjournal.sqlite3", "/objects/..%252f..%252fjournal.sqlite3",
        "/objects/%2fetc%2fpasswd", "/objects//etc/passwd", f"/objects/{zero}/../../journal.sqlite3",
        "/objects/..;/journal.sqlite3", f"/objects/{zero}%2f..%2f..%2fjournal.sqlite3",
        "/datasets/..%2F..%2Fstore.json", "/datasets/..%2f..%2fstore.json", "/datasets/../../store.json",
        "/datasets/%2e%2e/%2e%2e/store.json", "/datasets/%2e%2e%2f%2e%2e%2fstore.json", "/datasets/..%5c..%5cstore.json",
        "/datasets/..%c0%af..%c0%afstore.json", "/datasets/..%252F..%252Fstore.json",
        "/datasets/..%2F..%2Fstore.json/cases", "/datasets/" + str(store_dir / "store.json").replace("/", "%2F"),
        "/runs/..%2F..%2Fjournal.sqlite3", "/runs/..%2f..%2fjournal.sqlite3/calls",
        "/runs/x/calls/..%2f..%2f..%2fstore.json", "/runs/..%2F..%2Fstore.json/report",
    ]


def _raw_get(url: str, path: str, token: str) -> tuple[int, str, bytes]:
    """GET with the path sent verbatim (http.client does not normalise dot segments, httpx does)."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", API_PREFIX + path, headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        return resp.status, resp.getheader("content-type") or "", resp.read()
    finally:
        conn.close()


def test_path_traversal_never_serves_a_file(service, base, unchanged) -> None:
    secrets_on_disk = [b"SQLite format 3", service.service.store_id.encode(), b"root:x:0:0", service.token.encode(),
                       (service.store_dir / "store.json").read_bytes()]
    for path in _traversals(service.store_dir):
        status, ctype, body = _raw_get(service.url, path, service.token)
        assert 400 <= status < 500, (path, status, body[:200])
        for needle in secrets_on_disk:
            assert needle not in body, (path, needle, body[:200])


def _json_error_expected(path: str) -> Any:
    # every path, including those aiohttp normalises away from every route, gets a JSON error
    return path


@pytest.mark.parametrize("path", [_json_error_expected(p) for p in _traversals(Path("/store"))
                                  if "/store/store.json" not in p])
def test_path_traversal_answers_a_json_error(service, base, unchanged, path) -> None:
    status, ctype, body = _raw_get(service.url, path, service.token)
    assert 400 <= status < 500 and ctype.startswith("application/json"), (path, status, ctype, body[:100])
    err = json.loads(body)
    assert err["code"] in ("invalid_input", "not_found") and err["error"], err


def test_wrong_method_is_a_json_error(api, unchanged) -> None:
    _error(api.http.put("/plans", json={}), 405)


@pytest.mark.parametrize("damage", ["garbage journal", "damaged journal page", "empty-brace store.json",
                                    "store under a file"])
@pytest.mark.parametrize("embedded", [True, False])
def test_a_damaged_or_impossible_store_is_one_line_and_left_as_it_was(tmp_path, damage, embedded) -> None:
    """A journal that is not SQLite, a journal whose table pages are garbage, a store.json that is not JSON and
    a --store under a regular file were tracebacks (sqlite3.DatabaseError, JSONDecodeError, NotADirectoryError);
    each is now one line naming the file and the fix, and the damaged bytes are not touched."""
    store = tmp_path / "s" / "store"
    if damage == "damaged journal page":       # a real journal (made by a first start), pages 2–3 overwritten
        assert run_cli(["--store", str(store), "--embedded", "runs", "--json"], tmp_path, cli_env()).returncode == 0
        victim = store / "journal.sqlite3"
        data = victim.read_bytes()
        victim.write_bytes(data[:8192] + bytes((i * 97 + 13) % 256 for i in range(8192)) + data[16384:])
    elif damage == "store under a file":
        (tmp_path / "s").write_text("a file")
        victim = tmp_path / "s"
    else:
        store.mkdir(parents=True)
        victim = store / ("journal.sqlite3" if damage == "garbage journal" else "store.json")
        victim.write_bytes(b"\x00garbage " * 500 if damage == "garbage journal" else b"{bad")
    before = victim.read_bytes()
    proc = run_cli(["--store", str(store), *(["--embedded"] if embedded else []), "runs", "--json"], tmp_path,
                   cli_env(SR_BENCH_PORT="0"))
    assert proc.returncode == 2 and proc.stderr.startswith("error: "), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert str(victim) in proc.stderr and victim.read_bytes() == before


@pytest.mark.parametrize("embedded", [True, False])
def test_a_store_that_lost_its_journal_is_refused_not_started_afresh(tmp_path, embedded) -> None:
    """A store whose journal.sqlite3 was deleted (its cas/ full) opened as a new empty store: `runs` listed
    nothing and `store gc --apply` deleted every object as unreachable. It is refused, nothing created."""
    # deferred: the object store is only needed to put one object in this test's store
    from srbench.cas import ObjectStore

    store = tmp_path / "store"
    assert run_cli(["--store", str(store), "--embedded", "runs", "--json"], tmp_path, cli_env()).returncode == 0
    digest = ObjectStore(str(store / "cas")).put_bytes(b"a run's evidence")
    for f in store.glob("journal.sqlite3*"):
        f.unlink()
    try:
        for args in (["runs", "--json"], ["store", "gc", "--apply", "--grace-s", "0"]):
            proc = run_cli(["--store", str(store), *(["--embedded"] if embedded else []), *args], tmp_path,
                           cli_env(SR_BENCH_PORT="0"))
            assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert "journal.sqlite3 is missing: restore it from a copy" in proc.stderr, proc.stderr
    finally:        # no background service of this store outlives the test (one was found after a suite)
        run_cli(["--store", str(store), "--no-autostart", "stop"], tmp_path, cli_env())
    assert not (store / "journal.sqlite3").exists()
    assert ObjectStore(str(store / "cas")).get_bytes(digest) == b"a run's evidence"


@pytest.mark.parametrize("url", ["http://[::1", "notaurl", "ftp://127.0.0.1:21"])
def test_a_malformed_service_url_is_one_line(tmp_path, url) -> None:
    """`--url 'http://[::1'` was httpx's InvalidURL traceback."""
    proc = run_cli(["--url", url, "runs"], tmp_path, cli_env(SR_BENCH_TOKEN="t" * 32))
    assert proc.returncode == 2 and proc.stderr == f"error: --url / SR_BENCH_URL {url!r} is not an http(s) URL of " \
        "an sr-bench service (e.g. http://127.0.0.1:8090)\n", proc.stderr


def test_a_store_held_by_a_service_it_cannot_find_names_the_holder(tmp_path) -> None:
    """With its service.json damaged, a running service's store said only "another sr-bench service
    already owns the store": the lock now names the holder's pid."""
    import os
    import signal
    import time

    store, env = tmp_path / "store", cli_env(SR_BENCH_PORT="0")
    assert run_cli(["--store", str(store), "runs", "--json"], tmp_path, env).returncode == 0
    pid = int((store / "service.lock").read_text())
    try:
        (store / "service.json").write_text("{garbage")
        proc = run_cli(["--store", str(store), "runs", "--json"], tmp_path, env)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert f"already owns the store {store} (pid {pid}: " in proc.stderr
    finally:
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)


@pytest.mark.parametrize("run_id", ["../targets", "run-x?a=1", "run-8d01"])
def test_pull_takes_only_a_whole_run_id(tmp_path, run_id) -> None:
    """`pull ../targets` answered "Not Found", `pull 'run-x?a=1'` "Method Not Allowed" (the id went into the
    URL path as given); a run not yet in the store has no prefix to resolve either."""
    proc = run_cli(["--store", str(tmp_path / "s"), "--embedded", "pull", run_id], tmp_path, cli_env())
    assert proc.returncode == 2 and proc.stderr.startswith("error: pull needs a whole run id (run-<20 hex>"), proc.stderr
    assert repr(run_id) in proc.stderr and not (tmp_path / "s").exists()


@pytest.mark.parametrize("args", [["dataset", "show", "../targets"], ["dataset", "show", "x?y=1"],
                                  ["experiment", "show", "../../health"]])
def test_an_id_never_leaves_its_route(tmp_path, args) -> None:
    """`dataset show ../targets` was a KeyError traceback (the path normalised to /targets) and
    `dataset show 'x?y=1'` looked up dataset 'x'; an id with a dot segment, '?' or '#' is refused."""
    proc = run_cli(["--store", str(tmp_path / "s"), "--embedded", *args], tmp_path, cli_env())
    assert proc.returncode == 2 and "an id holds no '?', '#' or a '.'/'..' path segment" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("stack", ["../../evil", "a/b", ".", ".."])
def test_a_stack_name_never_leaves_the_state_root(tmp_path, stack) -> None:
    """SR_BENCH_STACK=../../evil made the managed store outside ./.sr-bench (two levels above the project)."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    proc = run_cli(["--embedded", "runs", "--json"], work, cli_env(SR_BENCH_STACK=stack))
    assert proc.returncode == 2 and proc.stderr == f"error: SR_BENCH_STACK must be a plain name (no '/', not '.' or " \
        f"'..'), got {stack!r}\n", proc.stderr
    assert [p.name for p in tmp_path.rglob("*")] == ["a", "b"]


@pytest.mark.parametrize("url", ["nope://x", "/dev/null"])
def test_an_objects_url_that_cannot_be_opened_is_one_line_and_never_recorded(tmp_path, url) -> None:
    """SR_BENCH_OBJECTS_URL=nope://x was a ValueError traceback, and the URL was already recorded in
    store.json, so every later start of the store failed the same way, even without the variable."""
    store = tmp_path / "store"
    proc = run_cli(["--store", str(store), "--embedded", "runs", "--json"], tmp_path, cli_env(SR_BENCH_OBJECTS_URL=url))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: the object store {url} cannot be opened ("), \
        proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "objects_url" not in (store / "store.json").read_text()
    again = run_cli(["--store", str(store), "--embedded", "runs", "--json"], tmp_path, cli_env())
    assert again.returncode == 0 and json.loads(again.stdout)["runs"] == []
