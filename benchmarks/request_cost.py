"""/health latency while the worst bodies of issue 25 are being refused, against idle /health.

Run by hand:  python benchmarks/request_cost.py [--polls 200]

The real service runs in its own process (its own GIL) on a temporary store. A poller on its own
keep-alive connection times `GET /health` every 10 ms; first idle (the baseline), then while each
body below is sent, again and again, on another connection. Each line printed is JSON: the body,
its size, its answer's status, the /health p50/p95/max during it and the ratio of that max to the idle
p95 and to the control's max (a body refused at once: what the machine's load alone costs), with the
goal of issue 25 (/health within 100 ms). Bodies: N unknown keys in one manifest object (/plans, /runs:
over the route's member budget, refused before parsing), spread over objects of 10,000 keys (/targets),
bodies over a route's byte limit, and the largest body a route reads (unknown cell fields for
/runs/{id}/recover, 8 MiB, within and over its member budget: every field a validation problem).
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
from pathlib import Path

import httpx

from srbench.discovery import API_PREFIX

SERVER = """
import asyncio
from srbench.service.api.app import serve
asyncio.run(serve(__import__("pathlib").Path({store!r}), "127.0.0.1", {port}, {token!r}))
"""


def _keys(n: int, per_object: int | None = None) -> list[dict[str, int]]:
    per = per_object or n
    return [{f"k{i}": 1 for i in range(j, min(n, j + per))} for j in range(0, n, per)]


def bodies() -> list[tuple[str, str, bytes]]:
    out = [("control: {} (refused at once, no work)", "/comparisons", b"{}")]
    for n in (40_000, 60_000, 200_000):
        flat = json.dumps({"manifest": _keys(n)[0]}).encode()
        out.append((f"{n} keys, one object", "/plans", flat))
        out.append((f"{n} keys, one object", "/runs", flat))
        out.append((f"{n} keys, objects of 10k", "/targets", json.dumps({"targets": _keys(n, 10_000)}).encode()))
    for n in (390_000, 700_000):      # within and over the recover route's member budget, under its 8 MiB
        cells = [{"case_id": "c", "target_id": "t", **{f"x{i}": 1 for i in range(j, j + 5_000)}}
                 for j in range(0, n, 5_000)]
        out.append((f"{n // 1000}k unknown cell fields (the 8 MiB route)", "/runs/nope/recover",
                    json.dumps({"cells": cells, "idempotency_key": "k"}, separators=(",", ":")).encode()))
    return out


def _poll(client: httpx.Client, stop: threading.Event, out: list[float]) -> None:
    while not stop.is_set():
        t = time.perf_counter()
        client.get("/health")
        out.append(time.perf_counter() - t)
        time.sleep(0.01)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polls", type=int, default=200, help="idle /health polls for the baseline")
    ap.add_argument("--seconds", type=float, default=6.0, help="how long each body is sent again and again")
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
            control = None
            for what, path, body in bodies():
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
                print(json.dumps({"body": what, "route": path, "bytes": len(body), "sent": sent,
                                  "status": sorted(statuses),
                                  "health_p50_ms": round(statistics.median(seen) * 1000, 2),
                                  "health_p95_ms": round(statistics.quantiles(seen, n=20)[-1] * 1000, 2),
                                  "health_max_ms": round(worst * 1000, 2),
                                  "ratio_max_to_idle_p95": round(worst / idle_p95, 1),
                                  "ratio_max_to_control_max": round(worst / control, 1),
                                  "goal_100ms_met": worst <= 0.1, "load": os.getloadavg()}))
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
