"""The stored request object (kind ``request``) keeps its bytes: subject, judge (with extras), a MoM
target's header names, an auxiliary role and a preview, pinned by digest (taken from the dict-literal
code before the model of issue 26)."""

from __future__ import annotations

from typing import Any

from srbench.cas import canonical_json, digest_bytes
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.target import Target
from srbench.stages.dispatch.common import Cell, preview_request, request_object
from srbench.targets.preview import preview_body

CASE = Case(id="b/1", benchmark="b", messages=[Message(role="system", content="Be brief."),
                                               Message(role="user", content="2+2?")], answer="4",
            metadata=CaseMetadata(stratum="all"))
CELL = Cell(cell_id="c-1", seq=3, case_id="b/1", target_id="t")
SINGLE = Target(id="t", kind="single", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="T_KEY")
OPEN = Target(id="o", kind="single", base_url="http://127.0.0.1:9/v1", model="m")
MOM = Target(id="r", kind="mom", base_url="http://127.0.0.1:9/v1", model="MoM", router="vllm-sr",
             preview_url="http://127.0.0.1:9/v1/route")


def _stored(req: Any) -> Any:
    return req.stored() if hasattr(req, "stored") else req


def _digests() -> dict[str, str]:
    reqs = {
        "subject": request_object(SINGLE, CASE, {"temperature": 0, "max_tokens": 64}, CELL),
        "open": request_object(OPEN, CASE, {}, CELL),
        "mom": request_object(MOM, CASE, {"max_tokens": 8}, CELL),
        "judge": request_object(SINGLE, CASE, {"temperature": 0}, CELL, role="judge",
                                messages=[{"role": "user", "content": "Grade: 4"}],
                                extras={"response_format": {"type": "json_object"}}),
        "user_simulator": request_object(OPEN, CASE, {}, CELL, role="user_simulator",
                                         messages=[{"role": "user", "content": "hi"}],
                                         extras={"tools": [{"type": "function", "function": {"name": "f"}}]}),
        "preview": preview_request(MOM, CASE, CELL, preview_body(MOM, [m.model_dump() for m in CASE.messages], 1, None)),
    }
    return {k: digest_bytes(canonical_json(_stored(v)))[3:15] for k, v in reqs.items()}


PINNED = {"judge": "4fb688642e1a", "mom": "8f9e69d0e54b", "open": "ce13394167ed", "preview": "ab21d4f75784",
          "subject": "8ae42a76e6ee", "user_simulator": "11ca2e2830d3"}


def test_request_objects_keep_their_bytes() -> None:
    assert _digests() == PINNED


def test_stored_is_the_models_dump() -> None:
    """`RequestObject.stored` builds the stored JSON directly (on every call's path): the same object as the
    model's dump, optional fields absent unless set (a conversation's call_index set here)."""
    reqs = [request_object(SINGLE, CASE, {"temperature": 0.5, "max_tokens": 64}, CELL),
            request_object(MOM, CASE, {"max_tokens": 8}, CELL, role="judge",
                           extras={"response_format": {"type": "json_object"}}),
            request_object(OPEN, CASE, {}, CELL).model_copy(update={"call_index": 2}),
            preview_request(MOM, CASE, CELL, preview_body(MOM, [m.model_dump() for m in CASE.messages], 1, None))]
    for req in reqs:
        assert req.stored() == req.model_dump(mode="json", by_alias=True)
