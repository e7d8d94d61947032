"""HLE's official judge with upstream's structured output (issue 12): opt-in through benchmark-options
``judge_response_format: "json_schema"``, frozen into the plan; the judge request then carries
upstream's ``response_format`` (checked in the body the fake OpenAI server receives and in the
journaled request); without the option the request is as before."""

from __future__ import annotations

import json
from pathlib import Path

from srbench.benchmarks.official_judges import HLE_OFFICIAL, HLE_RESPONSE_FORMAT
from srbench.benchmarks.published import HLE_RULE
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.scripted import Scripted
from srbench.simulate.thread import SimulatorThread

from .helpers import freeze, manifest, single

VERDICT = {"extracted_final_answer": "designated answer", "reasoning": "matches", "correct": "yes",
           "confidence": 80, "strict": True}


def _run(api, plan) -> str:
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    assert api.wait(run_id)["status"] == "completed"
    return run_id


def test_structured_output_is_opt_in(api, service, tmp_path) -> None:
    src = samples.write_hle(tmp_path / "hle")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "hle", "profile": "smoke", "source_path": str(src),
                                              "revision": "synthetic"})
    judge_bodies: list[dict] = []

    def script(body):
        if body["model"] != "judge-model":
            return None                          # the subject answers from the answer key
        judge_bodies.append(body)
        return Scripted(content=json.dumps(VERDICT))

    models = [SimModel("subject", skill=1.0), SimModel("judge-model", skill=1.0)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"]), script=script) as sim:
        api.ok("POST", "/targets", {"targets": [single("subject", sim.v1_url), single("judge", sim.v1_url,
                                                                                      "judge-model")]})
        m = manifest(ds, [{"id": "subject"}])
        opts = Path(service.store_dir) / "benchmark-options.json"
        base = {"judge": "judge", "grader_version": HLE_OFFICIAL}
        opts.write_text(json.dumps({"hle": base}))
        plain = freeze(api, m)
        assert "judge_response_format" not in plain["benchmark_options"]["hle"]
        _run(api, plain)
        n = len(judge_bodies)
        assert n == ds["case_count"] and all("response_format" not in b for b in judge_bodies)   # default: as before

        # refused before any call: an unknown value, or a judge template without a structured output
        opts.write_text(json.dumps({"hle": {**base, "judge_response_format": "json_object"}}))
        assert "judge_response_format must be 'json_schema'" in api.error("POST", "/plans", {"manifest": m}, 400)
        opts.write_text(json.dumps({"hle": {**base, "grader_version": "sr-bench-reference-judge-v1",
                                            "judge_response_format": "json_schema"}}))
        assert "has none" in api.error("POST", "/plans", {"manifest": m}, 400)

        opts.write_text(json.dumps({"hle": {**base, "judge_response_format": "json_schema"}}))
        plan = freeze(api, m)
        assert plan["benchmark_options"]["hle"]["judge_response_format"] == "json_schema"
        assert plan["plan_sha256"] != plain["plan_sha256"]
        run_id = _run(api, plan)
    structured = judge_bodies[n:]
    assert len(structured) == n
    for before, after in zip(judge_bodies[:n], structured, strict=True):
        assert after["response_format"] == HLE_RESPONSE_FORMAT                 # upstream's exact protocol
        assert after["messages"] == before["messages"]                         # the same official prompt
    schema = structured[0]["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["schema"]["properties"]["correct"]["enum"] == ["yes", "no"]
    assert set(schema["schema"]["required"]) == set(VERDICT)
    calls = api.ok("GET", f"/runs/{run_id}/calls")["calls"]
    cell = service.service.journal.one("SELECT judge_request FROM cells WHERE run_id=? AND cell_id=?",
                                       (run_id, calls[0]["cell_id"]))
    assert api.ok("GET", f"/objects/{cell['judge_request']}")["body"]["response_format"] == HLE_RESPONSE_FORMAT
    row = api.ok("GET", f"/runs/{run_id}/report")["benchmarks"][0]
    assert row["published"]["rule"] == HLE_RULE and row["published"]["score"] == 1.0 and row["accuracy"] == 1.0
