"""Guessing a secret is bounded without locking the owner out (issue 38, item 8): one token bucket of
checks for the whole process (`service.api.limiter.CheckLimiter`), for the Dashboard's sign-in and the
service's token alike. Many wrong secrets from many loopback addresses (each a real source address:
127.0.0.0/8 is all loopback) are checked at most BURST + RATE × t times, and the owner's right secret
is answered within a couple of seconds afterwards; a connection that proved the token is served
throughout."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

import httpx

from srbench.dashboard import make_dashboard
from srbench.dashboard.auth import COOKIE
from srbench.discovery import API_PREFIX
from srbench.service.api.limiter import CheckLimiter

from .helpers import DashboardThread

KEY = "limit-key-Vq8Lr3Zt6Wm2Xp9K"
ADDRESSES = [f"127.0.{i // 200}.{2 + i % 200}" for i in range(60)]
PER_ADDRESS = 5
# the owner after a flood: a refused attempt says Retry-After (≤ 1 s once the queue is full), then it
# waits its turn (≤ MAX_WAIT_S); the slack is for a busy test host, the exact bound is pinned below
OWNER_BOUND_S = 1 + CheckLimiter.MAX_WAIT_S + 2


def test_a_burst_from_anywhere_is_checked_at_a_bounded_rate() -> None:
    now = [0.0]
    lim = CheckLimiter(clock=lambda: now[0])
    waits = [lim.reserve() for _ in range(1000)]                 # 1000 guesses at one instant
    taken = [w for w in waits if w is not None]
    assert len(taken) == CheckLimiter.BURST + CheckLimiter.RATE_PER_S * CheckLimiter.MAX_WAIT_S
    assert max(taken) <= CheckLimiter.MAX_WAIT_S and lim.retry_after() == 1
    checked = len(taken)
    for _ in range(60_000):                                      # then one guess every millisecond for 60 s
        now[0] += 0.001
        checked += lim.reserve() is not None
    assert checked <= CheckLimiter.BURST + CheckLimiter.RATE_PER_S * (60 + CheckLimiter.MAX_WAIT_S) + 1, checked
    wait = lim.reserve()                                         # the owner, right when the flood stops
    delay = 0.0 if wait is not None else float(lim.retry_after())
    if wait is None:
        now[0] += delay
        wait = lim.reserve()
    assert wait is not None and delay + wait <= CheckLimiter.MAX_WAIT_S + 1 / CheckLimiter.RATE_PER_S + 1e-9


def test_right_secrets_never_drain_the_budget() -> None:
    now = [0.0]
    lim = CheckLimiter(clock=lambda: now[0])
    for _ in range(1000):                                        # the owner's own traffic: each check given back
        assert lim.reserve() == 0.0
        lim.refund()
    assert [lim.reserve() for _ in range(10)] == [0.0] * 10


def _flood(send: Callable[[httpx.Client], int]) -> tuple[Counter[int], float]:
    """PER_ADDRESS attempts from each of ADDRESSES at once: (statuses, seconds it took)."""
    seen: Counter[int] = Counter()
    lock = threading.Lock()

    def one(address: str) -> None:
        transport = httpx.HTTPTransport(local_address=address)
        with httpx.Client(transport=transport, timeout=30, follow_redirects=False) as c:
            for _ in range(PER_ADDRESS):
                status = send(c)
                with lock:
                    seen[status] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=one, args=(a,)) for a in ADDRESSES]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return seen, time.monotonic() - started


def _owner(attempt: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    """The right secret from a fresh address, following one Retry-After as a person would."""
    started = time.monotonic()
    r = attempt()
    if r.status_code == 429:
        time.sleep(int(r.headers["retry-after"]))
        r = attempt()
    return r, time.monotonic() - started


def _bounded(seen: Counter[int], wrong: int, elapsed: float) -> None:
    assert sum(seen.values()) == len(ADDRESSES) * PER_ADDRESS and set(seen) <= {wrong, 429}, seen
    checked = seen[wrong]
    assert checked <= CheckLimiter.BURST + CheckLimiter.RATE_PER_S * elapsed + 1, (seen, elapsed)
    assert seen[429] > 0, seen                       # the rest were refused unread, not checked


def test_many_wrong_keys_from_many_addresses_never_lock_the_owner_out(service) -> None:
    with DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        seen, elapsed = _flood(lambda c: c.post(dash.url + "/login", data={"key": "wrong-key-0123456789ab"}
                                                ).status_code)
        _bounded(seen, 401, elapsed)
        owner = httpx.Client(base_url=dash.url, transport=httpx.HTTPTransport(local_address="127.0.3.99"),
                             follow_redirects=False, timeout=30)
        with owner:
            r, waited = _owner(lambda: owner.post("/login", data={"key": KEY}))
            assert r.status_code == 303 and COOKIE in r.headers["set-cookie"], (r.status_code, r.text)
            assert waited <= OWNER_BOUND_S, waited
            assert owner.get("/api/health").status_code == 200


def test_many_wrong_tokens_never_lock_the_owner_out_of_the_service(service) -> None:
    health = service.url + API_PREFIX + "/health"
    with httpx.Client(headers={"Authorization": f"Bearer {service.token}"}, timeout=30) as kept:
        assert kept.get(health).status_code == 200             # a keep-alive connection that proved the token
        during: list[int] = []
        side = threading.Thread(target=lambda: during.extend(kept.get(health).status_code for _ in range(20)))
        side.start()
        refusals: list[httpx.Response] = []

        def guess(c: httpx.Client) -> int:
            r = c.get(health, headers={"Authorization": "Bearer wrong-token-0123456789"})
            if r.status_code == 429:
                refusals.append(r)
            return r.status_code

        seen, elapsed = _flood(guess)
        side.join(60)
    _bounded(seen, 403, elapsed)
    assert during == [200] * 20                                 # served throughout, never queued or refused
    fresh = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.3.98"), timeout=30,
                         headers={"Authorization": f"Bearer {service.token}"})
    with fresh:
        r, waited = _owner(lambda: fresh.get(health))
        assert r.status_code == 200 and waited <= OWNER_BOUND_S, (r.status_code, waited)
        started = time.monotonic()                              # one guesser in a row is paced, not refused
        paced = [fresh.get(health, headers={"Authorization": "Bearer wrong"}).status_code for _ in range(25)]
        assert paced == [403] * 25 and time.monotonic() - started >= (25 - CheckLimiter.BURST) / CheckLimiter.RATE_PER_S
    body = refusals[0].json()
    assert body["code"] == "rate_limited" and "retry in" in body["error"] and int(refusals[0].headers["retry-after"]) >= 1
