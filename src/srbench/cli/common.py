"""What every command module shares: the context object, JSON output, reading manifest files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from srbench.errors import InvalidInput


class Ctx:
    def __init__(self, store: str | None) -> None:
        self.store = store
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from srbench.service.client import connect

            self._client = connect(self.store)
        return self._client


def emit(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True))


def load_structured(path: str) -> Any:
    """Read a JSON or YAML file into Python values; bad files get one clear line."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"{path}: no such file")
    text = p.read_text(encoding="utf-8-sig")
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InvalidInput(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
        except RecursionError:
            raise InvalidInput(f"{path}: YAML nested too deeply") from None
        try:  # only what JSON can hold: no dates, sets, binary or NaN
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{path}: holds a value JSON cannot represent ({exc})") from None
        return value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
