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
390k/700k unknown cell fields (the bodies of issue 38), 5,000 or 990 a cell; a write route without a body
model gets 1 MiB it does not read (/shutdown left out). The routes are the service's route table
(`service.route_table.ROUTES`): a line names any route with a body model that got no body.

Each line printed is JSON: the body, its size, its answer's status, the /health p50/p95/max during it and the
ratio of that max to the idle p95 and to the control's max (a body refused at once: what the machine's load
alone costs). On a shared host a poll is also slowed by the host's other work, so each poll is also bounded
two ways from Linux's per-thread `/proc/.../schedstat` (run time, and time runnable but waiting for a CPU):
by the CPU the service's threads and the poller's thread used while it lasted (the service's own work done one
thread at a time: on an idle host the poll could not take longer), and by its time less what the service's
event-loop thread and the poller's thread spent waiting for a CPU (a thread waiting for the interpreter lock
sleeps, so that wait is the host's doing). `health_max_cpu_bound_ms` is the largest over the polls of the
smallest of the three: the most a poll could have taken on an otherwise idle host. Then one line per route:
its worst body and /health delay; the last line names the worst body of all.
"""

from __future__ import annotations

import argparse
import contextlib
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

from srbench.discovery import API_PREFIX
from srbench.service.route_table import ROUTES

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


def _url(path: str) -> str:
    return path.replace("{run_id}", "nope").replace("{experiment_id}", "nope")


def bodies(only: str | None = None) -> Iterator[tuple[str, str, str, bytes]]:
    """(what, method, url, body): the control, then each body route's worst bodies (built as they are sent: the
    recover ones are 8 MiB), then 1 MiB to each write route that reads no body."""
    yield "control: {} (refused at once, no work)", "POST", "/comparisons", b"{}"
    for r in ROUTES:
        if r.body is not None and (only is None or only in r.path):
            yield from ((what, r.method, url, raw) for what, url, raw in _route_bodies(r.path, r.body))
    if only is None or only in "/runs/{run_id}/recover":
        yield from ((what, "POST", url, raw) for what, url, raw in _recover_bodies())
    for r in ROUTES:
        if r.body is None and r.method != "GET" and r.name != "shutdown" and (only is None or only in r.path):
            yield "1 MiB the route does not read", r.method, _url(r.path), b"x" * (1024 * 1024)


def uncovered() -> list[str]:
    """The routes with a body model that `bodies` sends nothing to (none, unless a route reads its body in a
    way this script does not know)."""
    sent = {(method, url) for _, method, url, _ in bodies()}
    return [f"{r.method} {r.path}" for r in ROUTES if r.body is not None and (r.method, _url(r.path)) not in sent]


def _sched(pid: int, tid: str | None = None) -> tuple[int, int]:
    """(ns on a CPU, ns runnable but waiting for one) of process `pid`'s threads added up, or of its thread `tid`
    only ((0, 0) where /proc/.../schedstat is missing)."""
    run = wait = 0
    with contextlib.suppress(OSError):
        tasks = [Path(f"/proc/{pid}/task/{tid}")] if tid else list(Path(f"/proc/{pid}/task").iterdir())
        for task in tasks:
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (task / "schedstat").read_text().split()
                run, wait = run + int(fields[0]), wait + int(fields[1])
    return run, wait


def _poll(client: httpx.Client, server: int, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    """Time /health every 10 ms: (seconds, the most it could have taken on an idle host: see the top)."""
    me, pid = str(threading.get_native_id()), os.getpid()

    def now() -> tuple[int, int]:
        (service, _), (_, loop), (mine, waited) = _sched(server), _sched(server, str(server)), _sched(pid, me)
        return service + mine, loop + waited

    while not stop.is_set():
        cpu, waits = now()
        t = time.perf_counter()
        client.get("/health")
        took = time.perf_counter() - t
        cpu2, waits2 = now()
        out.append((took, max(0.0, min(took, (cpu2 - cpu) / 1e9, took - (waits2 - waits) / 1e9))))
        time.sleep(0.01)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _measure(poller: httpx.Client, sender: httpx.Client, server: int, method: str, url: str, body: bytes,
             seconds: float) -> tuple[list[tuple[float, float]], set[int], int]:
    """`body` sent again and again for `seconds` while /health is polled: (polls, statuses, bodies sent)."""
    seen: list[tuple[float, float]] = []
    stop = threading.Event()
    th = threading.Thread(target=_poll, args=(poller, server, stop, seen), daemon=True)
    th.start()
    statuses, sent, end = set(), 0, time.monotonic() + seconds
    while time.monotonic() < end:
        statuses.add(sender.request(method, url, content=body).status_code)
        sent += 1
    stop.set()
    th.join()
    return seen, statuses, sent


def _start(tmp: str) -> tuple[subprocess.Popen[bytes], str, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_urlsafe(24)
    code = SERVER.format(store=str(Path(tmp) / "store"), port=port, token=token)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, f"http://127.0.0.1:{port}{API_PREFIX}", token


def _wait_up(client: httpx.Client) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            client.get("/health").raise_for_status()
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polls", type=int, default=200, help="idle /health polls for the baseline")
    ap.add_argument("--seconds", type=float, default=3.0, help="how long each body is sent again and again")
    ap.add_argument("--route", default=None, help="only the routes whose path contains this")
    args = ap.parse_args()
    missing = uncovered()
    print(json.dumps({"body_routes_without_a_body_here": missing}))
    with tempfile.TemporaryDirectory() as tmp:
        proc, base, token = _start(tmp)
        headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        try:
            poller = httpx.Client(base_url=base, headers=headers, timeout=120)
            sender = httpx.Client(base_url=base, headers=headers, timeout=120)
            _wait_up(poller)
            idle: list[float] = []
            for _ in range(args.polls):
                t = time.perf_counter()
                poller.get("/health")
                idle.append(time.perf_counter() - t)
                time.sleep(0.01)
            idle_p95 = statistics.quantiles(idle, n=20)[-1]
            print(json.dumps({"idle_health_p50_ms": _ms(statistics.median(idle)), "idle_health_p95_ms": _ms(idle_p95),
                              "load": os.getloadavg()}))
            control: float | None = None
            per_route: dict[str, list[tuple[float, str]]] = {}      # route → [(worst, body), (worst bound, body)]
            for what, method, url, body in bodies(args.route):
                seen, statuses, sent = _measure(poller, sender, proc.pid, method, url, body, args.seconds)
                took = [t for t, _ in seen]
                worst, bound = max(took), max(x for _, x in seen)
                control = worst if control is None else control
                route = f"{method} {url}"
                old = per_route.setdefault(route, [(0.0, ""), (0.0, "")])
                per_route[route] = [max(old[0], (worst, what)), max(old[1], (bound, what))]
                print(json.dumps({"body": what, "route": route, "bytes": len(body), "sent": sent,
                                  "status": sorted(statuses), "health_p50_ms": _ms(statistics.median(took)),
                                  "health_p95_ms": _ms(statistics.quantiles(took, n=20)[-1]),
                                  "health_max_ms": _ms(worst), "health_max_cpu_bound_ms": _ms(bound),
                                  "ratio_max_to_idle_p95": round(worst / idle_p95, 1),
                                  "ratio_max_to_control_max": round(worst / control, 1),
                                  "goal_100ms_met": worst <= 0.1, "cpu_bound_within_100ms": bound <= 0.1,
                                  "load": os.getloadavg()}))
            for route, ((worst, what), (bound, bound_what)) in per_route.items():
                print(json.dumps({"route": route, "worst_body": what, "health_max_ms": _ms(worst),
                                  "worst_bound_body": bound_what, "health_max_cpu_bound_ms": _ms(bound),
                                  "goal_100ms_met": worst <= 0.1, "cpu_bound_within_100ms": bound <= 0.1}))
            (worst, what), route = max((v[0], k) for k, v in per_route.items())
            (bound, bound_what), bound_route = max((v[1], k) for k, v in per_route.items())
            print(json.dumps({"worst_body": f"{what} -> {route}", "health_max_ms": _ms(worst),
                              "ratio_to_control_max": round(worst / (control or 1), 1),
                              "worst_bound_body": f"{bound_what} -> {bound_route}",
                              "health_max_cpu_bound_ms": _ms(bound), "goal_100ms_met": worst <= 0.1,
                              "cpu_bound_within_100ms": bound <= 0.1, "load": os.getloadavg()}))
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
