"""What every command module shares: the context object, output (output.py), reading manifest files,
run ids by any unique prefix."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import click

from srbench.cli.output import emit
from srbench.errors import Conflict, InvalidInput, NotFound
from srbench.schemas.wire import WireJSON

__all__ = ["Ctx", "emit", "load_structured"]
FULL_RUN_ID = re.compile(r"run-[0-9a-f]{20}")


class Ctx:
    """The command's context: the store named by ``--store`` and, made on first use, its client. With
    ``embedded`` the client talks to an in-process service that `close` stops (no background process)."""

    def __init__(self, store: str | None, embedded: bool = False, *, url: str | None = None,
                 autostart: bool = True, ca_file: str | None = None) -> None:
        self.store = store
        self.ca_file = ca_file
        self.embedded = embedded
        self.url = url
        self.autostart = autostart
        self._client: Any = None
        self._service: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            if self.embedded:
                self._client = self._start_embedded()
            else:
                # deferred: srbench.client loads only for the commands that use it (the CLI starts light)
                from srbench.client.api import connect

                self._client = connect(self.store, autostart=self.autostart, url=self.url, ca_file=self.ca_file)
        return self._client

    def _start_embedded(self) -> Any:
        # deferred: srbench.client, srbench.discovery load only for the commands that use them (the CLI starts
        # light)
        from srbench.client.embedded import EmbeddedService
        from srbench.discovery import ensure_token, read_service_info, resolve_store, store_command

        if self.url or os.environ.get("SR_BENCH_URL"):
            raise InvalidInput("--embedded runs the command against its own in-process service: drop --url and "
                               "unset SR_BENCH_URL")
        store = resolve_store(self.store)
        svc = EmbeddedService(store, token=ensure_token(store))
        try:
            svc.start()
        except InvalidInput as exc:
            if "already owns the store" not in exc.message:
                raise
            info = read_service_info(store)
            where = f" (at {info.url}, pid {info.pid})" if info else ""
            raise Conflict(f"--embedded: another sr-bench service owns the store {store}{where}; the journal has "
                           f"one writer: stop it (`{store_command(store)}`) or run without --embedded "
                           "to use it") from None
        self._service = svc
        return svc.client

    def dataset_bytes(self, manifest: WireJSON) -> bytes:
        """A prepared dataset's frozen bytes: from the in-process store when embedded (any backend),
        else from the manifest's `path` on this host."""
        if self._service is not None:
            return self._service.service.objects.get_bytes(manifest["object"], verify=True)
        try:
            return Path(manifest["path"]).read_bytes()
        except OSError:
            raise InvalidInput(f"the dataset file {manifest['path']} is not readable on this host (a remote service "
                               "or object store): run with --embedded, or on the service host") from None

    def run_id(self, value: str) -> str:
        """A run id from any unique prefix of it (like git; the `run-` may be left out). A full id is
        used as given; an ambiguous prefix lists the candidates, an unknown one says so (one line each)."""
        if FULL_RUN_ID.fullmatch(value):
            return value
        ids: list[str] = []
        after = None
        while True:
            page = self.client.get("/runs", limit=500, after=after)
            ids += [r["id"] for r in page["runs"]]
            after = page.get("next_cursor")
            if not after:
                break
        if value in ids:
            return value
        found = [i for i in ids if value and (i.startswith(value) or i.startswith("run-" + value))]
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFound(f"no run id starts with {value!r} (`sr-bench runs` lists them)")
        shown = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
        raise InvalidInput(f"run id prefix {value!r} is ambiguous: {shown}; give more characters")

    def refuse_detach(self, detach: bool) -> None:
        """An embedded service ends with the command, so nothing can run on after it."""
        if detach and self.embedded:
            raise InvalidInput("--detach needs a service that outlives the command: run without --embedded")

    def close(self) -> None:
        if self._service is not None:
            service, self._service, self._client = self._service, None, None
            service.stop()


def load_structured(path: str) -> Any:
    """Read a JSON or YAML file into Python values; bad files get one clear line."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"{path}: no such file" if not p.exists() else
                           f"{path}: not a regular file (give the path of a JSON or YAML file)")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8 JSON or YAML text") from None
    if p.suffix.lower() in (".yaml", ".yml"):
        # deferred: PyYAML loads only when a YAML file is read
        import yaml

        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InvalidInput(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
        except RecursionError:
            raise InvalidInput(f"{path}: YAML nested too deeply") from None
        if not _within_values(value, MAX_YAML_VALUES):   # before anything expands it (json.dumps would)
            raise InvalidInput(f"{path}: expands to more than {MAX_YAML_VALUES:,} values (YAML aliases "
                               "repeating each other?); write the manifest out without anchors")
        try:  # only what JSON can hold: no dates, sets, binary or NaN
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{path}: holds a value JSON cannot represent ({exc})") from None
        return value
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise InvalidInput(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:
        raise InvalidInput(f"{path}: holds a value JSON cannot represent ({exc})") from None


MAX_YAML_VALUES = 1_000_000
"""A YAML file's values once its aliases are expanded: far above any manifest or targets file, far below
what an alias bomb (a few lines that repeat each other) expands to."""


def _within_values(value: Any, budget: int) -> bool:
    """Whether `value` holds at most `budget` values when shared (aliased) parts are counted each time they
    appear; stops counting at the budget, so the walk itself is bounded."""
    stack = [value]
    while stack:
        budget -= 1
        if budget < 0:
            return False
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _no_constant(name: str) -> Any:
    """json.loads accepts NaN and ±Infinity, which no JSON body (nor a limit) may hold."""
    raise ValueError(f"{name} is not a number JSON allows")


class FiniteFloat(click.FloatRange):
    """A number option that must be finite: `nan` and `inf` pass click's FloatRange but no JSON body carries
    them (`--max-cost-usd nan` was a ValueError traceback)."""

    name = "finite number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):           # before the range: `-inf` is not finite, whatever the bounds
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)

    def _describe_range(self) -> str:
        """No range in the help of an unbounded number (click wrote `[x<=None]`)."""
        return "" if self.min is None and self.max is None else super()._describe_range()
