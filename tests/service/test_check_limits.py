"""Guessing a secret is bounded without locking the owner out (issue 38, item 8): one limiter of checks for
the whole process (`service.api.limiter.CheckLimiter`), for the Dashboard's sign-in and the service's token
alike — at most BURST + RATE × t wrong secrets checked in t seconds from any number of addresses, and an
attempt over the budget waits its turn, the addresses that guessed wrong least first, instead of being
refused. So while wrong secrets keep arriving from many loopback addresses (each a real source address:
127.0.0.0/8 is all loopback), the owner's right secret from a fresh address is checked at the next turn;
a connection that proved the token is served throughout."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable

import httpx
import pytest

from srbench.dashboard import make_dashboard
from srbench.dashboard.auth import COOKIE
from srbench.discovery import API_PREFIX
from srbench.service.api.limiter import CheckLimiter, source_of

from .helpers import DashboardThread

KEY = "limit-key-Vq8Lr3Zt6Wm2Xp9K"
ADDRESSES = [f"127.0.{1 + i // 200}.{2 + i % 200}" for i in range(30)]
# the owner is checked at the next turn (0.1 s); the slack is for a busy test host
OWNER_BOUND_S = 5.0


def _run(coro: object) -> object:
    return asyncio.run(coro)        # type: ignore[arg-type]


def test_an_address_that_guessed_nothing_is_checked_before_every_address_that_guessed_wrong() -> None:
    async def go() -> list[str]:
        lim = CheckLimiter(rate_per_s=50, burst=1, max_waiting=100)
        for i in range(40):
            lim.settle(f"10.0.0.{i}", right=False)             # 40 addresses that guessed wrong once
        lim.settle("10.0.0.0", right=False)                     # one of them twice
        assert await lim.admit("10.0.0.1")                      # the budget is spent: the rest wait
        order: list[str] = []

        async def attempt(source: str) -> None:
            if await lim.admit(source):
                order.append(source)
        flood = [asyncio.create_task(attempt(f"10.0.0.{i}")) for i in range(40)]
        await asyncio.sleep(0)
        owner = asyncio.create_task(attempt("192.0.2.7"))      # arrives last, never guessed
        await asyncio.gather(*flood, owner)
        return order
    order = _run(go())
    assert isinstance(order, list) and len(order) == 41
    assert order[0] == "192.0.2.7", order[:5]                   # first, though 40 arrived before it
    assert order[-1] == "10.0.0.0", order[-5:]                  # the address that guessed most, last


def test_a_full_queue_refuses_the_farthest_back_never_the_owner() -> None:
    async def go() -> tuple[list[bool], bool, int]:
        lim = CheckLimiter(rate_per_s=20, burst=1, max_waiting=5)
        for i in range(10):
            for _ in range(1 + i):
                lim.settle(f"198.51.100.{i}", right=False)
        assert await lim.admit("198.51.100.0")
        flood = [asyncio.create_task(lim.admit(f"198.51.100.{i}")) for i in range(10)]
        await asyncio.sleep(0)
        owner = await lim.admit("203.0.113.9")
        return list(await asyncio.gather(*flood)), owner, lim.refused
    admitted, owner, refused = _run(go())                       # type: ignore[misc]
    assert owner is True
    assert admitted == [True] * 4 + [False] * 6, admitted        # 5 waited; the owner pushed out the worst
    assert refused == 6


def test_never_seen_addresses_jump_the_queue_once_each() -> None:
    """What the guarantee does not cover: an attacker with a supply of never-seen addresses fills the queue
    with rank-0 attempts, and the owner's rank-0 attempt is then refused, never more than `max_waiting` deep."""
    async def go() -> tuple[bool, bool]:
        lim = CheckLimiter(rate_per_s=20, burst=1, max_waiting=5)
        assert await lim.admit("x")
        fresh = [asyncio.create_task(lim.admit(f"fresh{i}")) for i in range(5)]
        await asyncio.sleep(0)
        owner = await lim.admit("owner")
        await asyncio.gather(*fresh)
        for i in range(5):
            lim.settle(f"fresh{i}", right=False)
        assert await lim.admit("y")                             # spends the budget again (after the wait)
        again = [asyncio.create_task(lim.admit(f"fresh{i}")) for i in range(5)]
        await asyncio.sleep(0)
        later = await lim.admit("owner")
        await asyncio.gather(*again)
        return owner, later
    assert _run(go()) == (False, True)


def test_an_address_that_was_right_goes_first_even_after_a_typo() -> None:
    now = [0.0]
    lim = CheckLimiter(clock=lambda: now[0])
    lim.settle("10.2.0.1", right=False)
    assert (lim.rank("10.2.0.1"), lim.rank("10.2.0.2")) == (1, 0)
    lim.settle("10.2.0.1", right=True)                           # signed in: its wrong secrets are forgotten
    lim.settle("10.2.0.1", right=False)                          # then a typo
    assert lim.rank("10.2.0.1") == -1
    now[0] += CheckLimiter.FORGET_S + 1                          # both are forgotten in time
    assert lim.rank("10.2.0.1") == 0


def test_checks_stay_within_the_global_rate_and_right_secrets_give_theirs_back() -> None:
    async def go() -> tuple[int, float, int]:
        lim = CheckLimiter(rate_per_s=40, burst=4, max_waiting=20, max_wait_s=1.0)
        start, checked = time.monotonic(), 0

        async def guesser(i: int) -> None:
            nonlocal checked
            while time.monotonic() - start < 1.0:
                if await lim.admit(f"10.1.0.{i}"):
                    checked += 1
                    lim.settle(f"10.1.0.{i}", right=False)
                else:
                    await asyncio.sleep(0.01)
        await asyncio.gather(*(guesser(i) for i in range(50)))
        owner = 0
        for _ in range(200):                                     # the owner's own traffic never drains it
            if await lim.admit("127.0.0.1"):
                owner += 1
                lim.settle("127.0.0.1", right=True)
        return checked, time.monotonic() - start, owner
    checked, elapsed, owner = _run(go())                        # type: ignore[misc]
    assert checked <= 4 + 40 * elapsed + 1, (checked, elapsed)
    assert checked >= 20, checked                                # the flood was checked, at the rate
    assert owner == 200


@pytest.mark.parametrize(("peer", "source"), [
    ("127.0.0.5", "127.0.0.5"), ("::ffff:192.0.2.1", "192.0.2.1"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"), ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
    (None, ""), ("unix", "unix")])
def test_a_source_is_an_ipv4_address_or_an_ipv6_64(peer: str | None, source: str) -> None:
    assert source_of(peer) == source


class Flood:
    """Wrong secrets from each of ADDRESSES, again and again, until stopped (a refused attempt is retried
    after 0.2 s, to spare a shared test host): the statuses seen, and which addresses were checked."""

    def __init__(self, send: Callable[[httpx.Client], int], wrong: int) -> None:
        self.send, self.wrong = send, wrong
        self.seen: Counter[int] = Counter()
        self.checked: set[str] = set()
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._one, args=(a,), daemon=True) for a in ADDRESSES]

    def _one(self, address: str) -> None:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=30,
                          follow_redirects=False) as c:
            while not self.stop.is_set():
                status = self.send(c)
                with self._lock:
                    self.seen[status] += 1
                    if status == self.wrong:
                        self.checked.add(address)
                if status == 429:
                    time.sleep(0.2)

    def __enter__(self) -> Flood:
        self.started = time.monotonic()
        for t in self._threads:
            t.start()
        deadline = time.monotonic() + 60                      # every address has guessed wrong at least once
        while len(self.checked) < len(ADDRESSES) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(self.checked) == len(ADDRESSES), len(self.checked)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(60)
        self.elapsed = time.monotonic() - self.started

    def bounded(self) -> None:
        """Checked at most BURST + RATE × t times, the rest refused unread."""
        assert set(self.seen) <= {self.wrong, 429}, self.seen
        assert self.seen[self.wrong] <= CheckLimiter.BURST + CheckLimiter.RATE_PER_S * self.elapsed + 1, \
            (self.seen, self.elapsed)
        assert self.seen[429] > 0, self.seen


def _timed(attempt: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = attempt()
    return r, time.monotonic() - started


def test_the_owners_key_signs_in_during_a_flood_of_wrong_keys_from_many_addresses(service) -> None:
    with DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        flood = Flood(lambda c: c.post(dash.url + "/login", data={"key": "wrong-key-0123456789ab"}).status_code, 401)
        with flood:
            owner = httpx.Client(base_url=dash.url, transport=httpx.HTTPTransport(local_address="127.0.3.99"),
                                 follow_redirects=False, timeout=30)
            with owner:
                r, waited = _timed(lambda: owner.post("/login", data={"key": KEY}))
                assert r.status_code == 303 and COOKIE in r.headers["set-cookie"], (r.status_code, r.text[:300])
                assert waited <= OWNER_BOUND_S, waited
                assert owner.get("/api/health").status_code == 200
                typo, _ = _timed(lambda: owner.post("/login", data={"key": KEY + "x"}))
                again, waited = _timed(lambda: owner.post("/login", data={"key": KEY}))
                assert (typo.status_code, again.status_code) == (401, 303) and waited <= OWNER_BOUND_S
        flood.bounded()


def test_the_owners_token_is_answered_during_a_flood_of_wrong_tokens(service) -> None:
    health = service.url + API_PREFIX + "/health"
    refusals: list[httpx.Response] = []

    def guess(c: httpx.Client) -> int:
        r = c.get(health, headers={"Authorization": "Bearer wrong-token-0123456789"})
        if r.status_code == 429:
            refusals.append(r)
        return r.status_code

    with httpx.Client(headers={"Authorization": f"Bearer {service.token}"}, timeout=30) as kept:
        assert kept.get(health).status_code == 200             # a keep-alive connection that proved the token
        with Flood(guess, 403) as flood:
            during = [kept.get(health).status_code for _ in range(20)]
            fresh = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.3.98"), timeout=30,
                                 headers={"Authorization": f"Bearer {service.token}"})
            with fresh:
                r, waited = _timed(lambda: fresh.get(health))
                assert r.status_code == 200 and waited <= OWNER_BOUND_S, (r.status_code, waited)
    flood.bounded()
    assert during == [200] * 20                                 # served throughout, never queued or refused
    body = refusals[0].json()
    assert body["code"] == "rate_limited" and "retry in" in body["error"] and int(refusals[0].headers["retry-after"]) >= 1


def test_one_guesser_in_a_row_is_paced_not_refused(service) -> None:
    health = service.url + API_PREFIX + "/health"
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.3.97"), timeout=30) as one:
        started = time.monotonic()
        paced = [one.get(health, headers={"Authorization": "Bearer wrong"}).status_code for _ in range(25)]
        assert paced == [403] * 25
        assert time.monotonic() - started >= (25 - CheckLimiter.BURST) / CheckLimiter.RATE_PER_S - 0.2
