"""/health latency while the worst bodies of every body route are being posted, against idle /health (issue 25;
issue 38, item 6: no request holds /health over 100 ms, the 8 MiB recover body included).

Run by hand:  python benchmarks/request_cost.py [--seconds 3] [--route recover]

The real service runs in its own process (its own GIL) on a temporary store. A poller on its own keep-alive
connection times `GET /health` every 10 ms; first idle (the baseline), then while each body below is sent,
again and again, on another connection. Every route that reads a body (the route registry:
`service.api.bindings.REGISTRY`) gets its worst bodies, sized to its byte limit: unknown keys in one object,
unknown keys whose values nest 15 deep, for routes over 64 KiB also an object whose members are all objects
and an array of scalars up to the route's value budget; the recover route also 150k upstream cells (valid, to
a run that does not exist: parsed and validated, then a 404), 200k unknown cell keys nesting 15 deep and
390k/700k unknown cell fields (the bodies of issue 38), 5,000 or 990 a cell. Each line printed is JSON: the
body, its size, its answer's status, the /health p50/p95/max during it and the ratio of that max to the idle
p95 and to the control's max (a body refused at once: what the machine's load alone costs); the last line
names the worst body and how long /health waited while it was posted.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from pydantic import BaseModel

import srbench.service.app  # noqa: F401  (declares every route)
from srbench.discovery import API_PREFIX
from srbench.service.api.bindings import REGISTRY

SERVER = """
import asyncio
from srbench.service.app import serve
asyncio.run(serve(__import__("pathlib").Path({store!r}), "127.0.0.1", {port}, {token!r}))
"""


def _fill(limit: int, item: str) -> str:
    """Unknown keys `"k0":item,"k1":item,...` filling about 95 % of `limit` bytes (one object's members)."""
    n = max(1, int(limit * 0.95) // (len(item) + 10))
    return ",".join(f'"k{i}":{item}' for i in range(n))


def _route_bodies(path: str, model: type[BaseModel]) -> list[tuple[str, str, bytes]]:
    """The worst bodies of one route, sized to its limits (`service.api.http.Budget`)."""
    limit = model.max_body      # type: ignore[attr-defined]
    url = path.replace("{run_id}", "nope").replace("{experiment_id}", "nope")
    out = [("unknown keys, one object", url, ("{" + _fill(limit, "1") + "}").encode()),
           ("unknown keys nesting 15 deep", url, ("{" + _fill(limit, "[" * 15 + "1" + "]" * 15) + "}").encode())]
    if limit > 64 * 1024:
        members = min(model.max_members, model.max_objects) - 10     # type: ignore[attr-defined]
        members = min(members, limit // 12)
        out.append(("an object of objects", url,
                    ('{"x":{' + ",".join(f'"k{i}":{{}}' for i in range(members)) + "}}").encode()))
        values = min(model.max_values - 10, limit // 2 - 20)    # type: ignore[attr-defined]
        out.append(("an array of scalars", url, ('{"x":[' + ",".join("1" * values) + "]}").encode()))
    return out


def _recover_bodies() -> list[tuple[str, str, bytes]]:
    url = "/runs/nope/recover"
    cells = [{"case_id": f"c{i:06d}", "target_id": "t"} for i in range(150_000)]
    out = [("150k upstream cells (valid: parsed, then a 404)", url,
            json.dumps({"mode": "undispatched", "plan_sha256": "0" * 64, "cells": cells, "idempotency_key": "k"},
                       separators=(",", ":")).encode())]
    deep = "[" * 15 + "1" + "]" * 15
    out.append(("200k unknown cell keys nesting 15 deep", url,
                ('{"cells":[{"case_id":"c","target_id":"t",' + ",".join(f'"x{i}":{deep}' for i in range(200_000))
                 + '}],"idempotency_key":"k"}').encode()))
    for n, per in ((390_000, 5_000), (390_000, 990), (700_000, 990)):    # over its members per object, within
        fields = [{"case_id": "c", "target_id": "t", **{f"x{i}": 1 for i in range(j, j + per)}}   # and over its
                  for j in range(0, n, per)]                                                 # member budget
        out.append((f"{n // 1000}k unknown cell fields, {per} a cell", url,
                    json.dumps({"cells": fields, "idempotency_key": "k"}, separators=(",", ":")).encode()))
    return out


def bodies(only: str | None = None) -> Iterator[tuple[str, str, bytes]]:
    """The control, then each body route's worst bodies (built as they are sent: the recover ones are 8 MiB)."""
    yield "control: {} (refused at once, no work)", "/comparisons", b"{}"
    for r in REGISTRY.values():
        if r.body is not None and (only is None or only in r.path):
            yield from _route_bodies(r.path, r.body)
    if only is None or only in "/runs/{run_id}/recover":
        yield from _recover_bodies()


def _poll(client: httpx.Client, stop: threading.Event, out: list[float]) -> None:
    while not stop.is_set():
        t = time.perf_counter()
        client.get("/health")
        out.append(time.perf_counter() - t)
        time.sleep(0.01)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polls", type=int, default=200, help="idle /health polls for the baseline")
    ap.add_argument("--seconds", type=float, default=3.0, help="how long each body is sent again and again")
    ap.add_argument("--route", default=None, help="only the routes whose path contains this")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        token = secrets.token_urlsafe(24)
        code = SERVER.format(store=str(Path(tmp) / "store"), port=port, token=token)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}{API_PREFIX}"
        headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        try:
            poller = httpx.Client(base_url=base, headers=headers, timeout=120)
            sender = httpx.Client(base_url=base, headers=headers, timeout=120)
            deadline = time.monotonic() + 30
            while True:
                try:
                    poller.get("/health").raise_for_status()
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            idle: list[float] = []
            for _ in range(args.polls):
                t = time.perf_counter()
                poller.get("/health")
                idle.append(time.perf_counter() - t)
                time.sleep(0.01)
            idle_p95 = statistics.quantiles(idle, n=20)[-1]
            print(json.dumps({"idle_health_p50_ms": round(statistics.median(idle) * 1000, 2),
                              "idle_health_p95_ms": round(idle_p95 * 1000, 2), "load": os.getloadavg()}))
            control, worst_of_all = None, (0.0, "")
            for what, path, body in bodies(args.route):
                seen: list[float] = []
                stop = threading.Event()
                th = threading.Thread(target=_poll, args=(poller, stop, seen), daemon=True)
                th.start()
                statuses, sent, end = set(), 0, time.monotonic() + args.seconds
                while time.monotonic() < end:
                    statuses.add(sender.post(path, content=body).status_code)
                    sent += 1
                stop.set()
                th.join()
                worst = max(seen)
                control = worst if control is None else control
                worst_of_all = max(worst_of_all, (worst, f"{what} -> POST {path}"))
                print(json.dumps({"body": what, "route": path, "bytes": len(body), "sent": sent,
                                  "status": sorted(statuses),
                                  "health_p50_ms": round(statistics.median(seen) * 1000, 2),
                                  "health_p95_ms": round(statistics.quantiles(seen, n=20)[-1] * 1000, 2),
                                  "health_max_ms": round(worst * 1000, 2),
                                  "ratio_max_to_idle_p95": round(worst / idle_p95, 1),
                                  "ratio_max_to_control_max": round(worst / control, 1),
                                  "goal_100ms_met": worst <= 0.1, "load": os.getloadavg()}))
            print(json.dumps({"worst_body": worst_of_all[1], "health_max_ms": round(worst_of_all[0] * 1000, 2),
                              "ratio_to_control_max": round(worst_of_all[0] / (control or 1), 1),
                              "goal_100ms_met": worst_of_all[0] <= 0.1, "load": os.getloadavg()}))
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
