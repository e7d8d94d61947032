"""The Dashboard's browser tests' shared parts: the system's Chromium driven by Playwright, axe-core
injected into each page (critical and serious findings fail), a screenshot of every page into a
temporary folder (never the repository), and the page-width check for a 390 px phone.

Skipped, saying why, where Chromium or axe-core is missing: `.ci/run` installs Debian's chromium and
fetches axe-core from the npm registry into its cache; `SR_BENCH_CHROMIUM` names another browser,
`SR_BENCH_AXE` the `axe.min.js` to inject, `SR_BENCH_SCREENSHOTS` where the screenshots go.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("SR_BENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium)")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
AXE_VERSION = "4.14.1"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def axe_path() -> Path | None:
    env = os.environ.get("SR_BENCH_AXE")
    return Path(env) if env and Path(env).is_file() else None


def axe_findings(page: Any, source: str) -> list[dict[str, Any]]:
    """axe-core's critical and serious violations on the page as it is now (injected through the
    DevTools protocol, so the page's own Content-Security-Policy stays as it is)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(source + "\n;true")
    return page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.filter(v => v.impact === 'critical' || v.impact === 'serious')
          .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 4).map(n => n.target.join(' '))}));
    }""")


def check_page(page: Any, source: str, shots: Path, name: str, *, phone: bool = True) -> None:
    """axe clean (critical + serious) at desktop width and, at 390 px, no page wider than the screen;
    a full-page screenshot at each width."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
    page.set_viewport_size(DESKTOP)
    page.wait_for_timeout(150)
    found = axe_findings(page, source)
    page.screenshot(path=str(shots / f"{safe}-1280.png"), full_page=True)
    assert found == [], (name, found)
    if phone:
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(150)
        width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(shots / f"{safe}-390.png"), full_page=True)
        assert width <= PHONE["width"], (name, width, page.evaluate(WIDEST))
        small = axe_findings(page, source)
        assert small == [], (name, "390 px", small)
        page.set_viewport_size(DESKTOP)


# for a failing width check: the widest elements that are not inside a scroll container
WIDEST = """() => [...document.querySelectorAll('body *')].filter(e => !e.closest('.scroll'))
  .map(e => [e.getBoundingClientRect().right, e.tagName + '.' + e.className]).sort((a, b) => b[0] - a[0]).slice(0, 5)"""


def tab_until(page: Any, test_js: str, limit: int = 120) -> None:
    """Press Tab until `test_js` (an expression over `document.activeElement` as `el`) holds."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"(() => {{ const el = document.activeElement; return !!({test_js}); }})()"):
            return
    raise AssertionError(f"Tab never reached an element where {test_js}")


def wait_true(page: Any, expression: str, timeout_s: float = 30.0) -> None:
    """Wait until `expression` is true in the page. Not `wait_for_function`: its polling evaluates a
    string inside the page, which the Dashboard's CSP (script-src 'self') refuses when the first
    check is false (seen under load)."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"still false after {timeout_s} s: {expression}"
        time.sleep(0.05)


def sign_in(page: Any, url: str, key: str) -> None:
    """Sign the page in through the sign-in form (the key is never accepted in a URL)."""
    page.goto(url + "/login")
    page.fill("input[name=key]", key)
    page.click("button[type=submit]")
    page.wait_for_url(url + "/")
