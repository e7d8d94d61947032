"""Issue 27 in a real Chromium: a cancelled run's page says "partial" with both denominators and never
waits for a finish that will not come; timestamps (events, config-hash checks) show in the viewer's
local time, never "Invalid Date", whether the API sent ISO text or epoch seconds; at 390 px the runs
list shows status and progress and the run page's saving column is on-screen; "Does routing pay?"
shows the standing (formal or dev) and p50/p95 latency per side."""

from __future__ import annotations

from datetime import datetime

from srbench.dashboard import make_dashboard

from .browser import PHONE, check_page, needs_chromium, sign_in, wait_true
from .helpers import DashboardThread, freeze, manifest
from .test_partial_runs import ANSWERED, cancelled_run, stalling_sim

pytestmark = needs_chromium
KEY = "partial-key-0123456789abcdef"
ZONE = "America/St_Johns"               # UTC−3:30: a local time no UTC rendering matches by chance


def _on_screen(page, selector: str) -> list[float]:
    """The right edge of every element matching `selector` (all must be inside the 390 px screen)."""
    return page.evaluate(f"[...document.querySelectorAll({selector!r})].map(e => e.getBoundingClientRect().right)")


def _local(page, iso: str) -> str:
    return page.evaluate(f"new Date({datetime.fromisoformat(iso).timestamp()} * 1000).toLocaleString()")


def test_cancelled_run_page_dates_and_the_phone_layout(browser, axe, shots, service, api, prepare) -> None:
    ds = prepare("mmlu-pro")
    with stalling_sim(ds) as sim, DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        cancelled = cancelled_run(api, ds, sim)
        sim.server.fault = None                                     # the endpoint answers again
        done = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}, {"id": "mom"}],
                                                                          name="finished-run"))})["id"]
        assert api.wait(done, timeout=60)["status"] == "completed"
        rep = api.ok("GET", f"/runs/{cancelled}/report")
        pair = rep["paired"]["candidates"][0]
        context = browser.new_context(timezone_id=ZONE, locale="en-GB")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        sign_in(page, dash.url, KEY)

        # -- the runs list at 390 px: status and progress on-screen ------------------------------------
        page.locator("tr.link", has_text="finished-run").wait_for()
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(150)
        rights = _on_screen(page, "tr.link td:nth-child(2)") + _on_screen(page, "tr.link td:nth-child(3)")
        assert len(rights) == 4 and max(rights) <= PHONE["width"], rights
        row = page.locator("tr.link", has_text="cancelled-run").inner_text()
        assert row.startswith(f"cancelled-run\tcancelled\t{ANSWERED} / 28\t")
        updated = api.ok("GET", f"/runs/{cancelled}")["updated_at"]
        assert _local(page, updated) in row and "Invalid Date" not in page.content()
        check_page(page, axe, shots, "partial-runs")

        # -- the cancelled run: partial, both denominators, no waiting ----------------------------------
        page.goto(dash.url + f"/#/run/{cancelled}")
        head = page.locator("section.headline")
        head.locator("article.router h3").wait_for()
        text = head.inner_text()
        assert "The answer appears when the run has finished" not in page.content()
        assert f"partial: {ANSWERED} of 28 planned cells answered (run cancelled: it will not finish)" in text
        assert "will not finish" in text and "make no claim" in text
        strong = next(t for t in rep["summary"]["targets"] if t["target_id"] == "strong")
        assert (f"strong: {strong['accuracy']:.3f} over all 14 planned cells ({strong['correct']} / 14; unanswered count as "
                f"not correct) · {strong['accuracy_answered']:.3f} over the {strong['completed']} answered cells") in text
        assert head.locator("article.router h3").inner_text() == f"mom vs strong — {pair['label']}"
        assert f"{pair['n']} of 14 cases answered by both" in text and f"Δ macro quality {pair['delta']:+.3f}" in text
        assert "Standing: partial, dev (not a formal conclusion)" in text and "latency p95" in text
        summary = page.locator("#summary").inner_text()
        assert f"partial: {ANSWERED} of 28 planned cells answered" in summary and "accuracy over answered cells" in summary
        assert f"{strong['accuracy_answered']:.3f} ({strong['correct']} / {strong['completed']})" in summary
        check_page(page, axe, shots, "partial-run")

        # -- times in local time: the events tab and the config-hash checks ------------------------------
        events = api.ok("GET", f"/runs/{cancelled}/events")["events"]
        page.get_by_role("tab", name="events").click()
        page.locator("#run-panel tbody tr").first.wait_for()
        cells = page.locator("#run-panel tbody tr td:nth-child(2)").all_inner_texts()
        assert cells and "Invalid Date" not in page.content()
        newest = events[-1] if len(events) <= 100 else None
        assert newest is None or cells[0] == _local(page, newest["at"])
        page.get_by_role("tab", name="evidence").click()
        checks = page.locator("section, details", has_text="Config-hash checks").locator("tbody tr")
        checks.first.wait_for()
        probe = next(e for e in events if e["kind"] == "config_hash_checked")
        assert checks.first.locator("td").first.inner_text() == _local(page, probe["at"])
        assert "Invalid Date" not in page.content()
        # one formatter for both wire forms: epoch seconds (number or text) and ISO text; junk stays as sent
        epoch = datetime.fromisoformat(probe["at"]).timestamp()
        same = page.evaluate(f"[fmt.time({epoch}), fmt.time('{epoch}'), fmt.time({probe['at']!r}), fmt.time('soon')]")
        assert same[0] == same[1] == same[2] == _local(page, probe["at"]) and same[3] == "soon"

        # -- the finished run: standing, latency per side, the saving column on-screen at 390 px ---------
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(dash.url + f"/#/run/{done}")
        page.locator("section.headline article.router h3").wait_for()
        cmp = api.ok("POST", "/comparisons", {"baseline_run_id": done, "candidate_run_id": done})
        text = page.locator("section.headline").inner_text()
        assert f"Standing: {cmp['evidence']['label']}" in text
        ops = cmp["candidates"][1]["operations"] if cmp["candidates"][0]["kind"] != "mom" else cmp["candidates"][0]["operations"]
        lat = page.locator("section.headline table", has_text="latency p50").locator("tbody tr").all_inner_texts()
        assert lat[0].split("\t")[1:] == [f"{ops['candidate']['latency_p50_s']:.2f} s", f"{ops['candidate']['latency_p95_s']:.2f} s"]
        assert lat[1].split("\t")[1:] == [f"{ops['baseline']['latency_p50_s']:.2f} s", f"{ops['baseline']['latency_p95_s']:.2f} s"]
        page.set_viewport_size(PHONE)
        wait_true(page, "document.querySelectorAll('td.saving').length === 3")
        rights = _on_screen(page, "td.saving")
        assert max(rights) <= PHONE["width"] and min(_on_screen(page, "td.saving")) > 0, rights
        check_page(page, axe, shots, "finished-run")

        # -- an experiment lists the cancelled iteration as partial, not as "not finished" ----------------
        exp = api.ok("POST", "/experiments", {"name": "partial iterations"})["id"]
        api.ok("POST", f"/experiments/{exp}/runs", {"run_id": cancelled, "role": "candidate", "hypothesis": "stalls"})
        page.goto(dash.url + f"/#/experiment/{exp}")
        page.locator("h1", has_text="partial iterations").wait_for()
        row = page.locator("#view tbody tr", has_text="stalls")
        row.wait_for()
        line = row.inner_text()
        assert f"partial: {ANSWERED} of 28 cells answered (cancelled, it will not finish): no claim" in line, line
        assert errors == []
        context.close()


def test_a_stopped_early_run_is_labelled_partial(browser, service, api, tmp_path, sources) -> None:
    """A run stopped early by its plan's rule: the comparison on its measured prefix says 'partial: n of
    N', and the report summary gives both denominators."""
    from .test_early_stop import BETTING_STOP, _sim, _targets
    from .test_early_stop import dataset as early_dataset

    dataset = early_dataset.__wrapped__(api, tmp_path, sources)
    with _sim(dataset) as sim, DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        api.ok("POST", "/targets", {"targets": _targets(sim)})
        m = manifest(dataset, [{"id": "strong"}, {"id": "mom"}], statistics=BETTING_STOP, name="stopped-run")
        m["limits"]["concurrency"] = 2
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        assert api.wait(run_id, timeout=60)["stopped_early"] is True
        rep = api.ok("GET", f"/runs/{run_id}/report")
        cmp = api.ok("POST", "/comparisons", {"baseline_run_id": run_id, "candidate_run_id": run_id})
        assert cmp["cases"] < cmp["planned_cases"]
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        sign_in(page, dash.url, KEY)
        page.goto(dash.url + f"/#/run/{run_id}")
        page.locator("section.headline article.router h3").wait_for()
        text = page.locator("section.headline").inner_text()
        assert f"partial: {cmp['cases']} of {cmp['planned_cases']} planned cases compared" in text
        assert rep["partial"]["label"] in page.locator("#summary").inner_text()
        assert "will not finish" in rep["partial"]["label"]
        # the wire says upstream's `completed`; the Dashboard still names the run's own end
        assert page.locator("h1").first.inner_text().endswith("— stopped_early")
        page.close()
