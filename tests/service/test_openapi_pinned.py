"""The OpenAPI document is pinned (issue 26, item 2): the generated document, byte for byte as the service
serves it (same key order, same values), equals the stored copy `data/openapi.json`, generated from main
before the routes carried their own types. A change to a route, a request or an answer model shows here
as a diff of that file; when the change is meant (a fix named in its commit), write the file anew with
``python tests/service/test_openapi_pinned.py --write`` and commit it with the change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from srbench.service.api.openapi import openapi_document

PINNED = Path(__file__).parent / "data" / "openapi.json"


def _text() -> str:
    # the key order is the served order (web.json_response dumps without sorting); indent only adds whitespace
    return json.dumps(openapi_document(), indent=1) + "\n"


def test_the_document_equals_the_pinned_copy() -> None:
    pinned = PINNED.read_text()
    text = _text()
    assert list(json.loads(text)["paths"]) == list(json.loads(pinned)["paths"]), "the order of the paths changed"
    assert list(json.loads(text)["components"]["schemas"]) == list(json.loads(pinned)["components"]["schemas"])
    assert text == pinned, ("the OpenAPI document changed; if that is meant, run "
                            "`python tests/service/test_openapi_pinned.py --write` and name the change in the commit")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    PINNED.write_text(_text())
