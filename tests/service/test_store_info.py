"""A store's ``store.json`` read and written through StoreInfo (service/app.py): the bytes of before."""

from __future__ import annotations

import json

import pytest

from srbench.errors import InvalidInput
from srbench.service.app import _store_info, objects_location


def test_made_once_with_the_bytes_of_before(tmp_path):
    info = _store_info(tmp_path)
    text = (tmp_path / "store.json").read_text()
    assert text == json.dumps({"store_id": info.store_id, "version": info.version})
    assert _store_info(tmp_path) == info and (tmp_path / "store.json").read_text() == text


def test_unknown_keys_kept_and_objects_url_recorded(tmp_path, monkeypatch):
    (tmp_path / "store.json").write_text(json.dumps({"store_id": "store-1", "version": "0.1", "later": [1]}))
    url = str(tmp_path / "objects")
    monkeypatch.setenv("SR_BENCH_OBJECTS_URL", url)
    assert objects_location(tmp_path, _store_info(tmp_path)) == url
    assert (tmp_path / "store.json").read_text() == json.dumps(
        {"store_id": "store-1", "version": "0.1", "objects_url": url, "later": [1]})
    monkeypatch.delenv("SR_BENCH_OBJECTS_URL")
    assert objects_location(tmp_path, _store_info(tmp_path)) == url       # later starts find the same objects


def test_damaged_store_json_is_one_line(tmp_path):
    (tmp_path / "store.json").write_text(json.dumps({"store_id": 5}))
    with pytest.raises(InvalidInput, match="is damaged"):
        _store_info(tmp_path)
