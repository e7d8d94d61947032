"""The Dashboard in a real Chromium (Playwright driving the system's browser): sign-in, Runs with a
network loss, a run page, and UI-8 recovery whose response is lost and re-sent with the same key.

Skipped (with the reason) where no Chromium is installed; `.ci/run` installs Debian's package.
"""

from __future__ import annotations

from srbench.dashboard import make_dashboard
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread

from .browser import needs_chromium, sign_in, wait_true
from .helpers import DashboardThread, freeze, manifest, single

pytestmark = needs_chromium
KEY = "browser-key-0123456789abcdef"


def test_sign_in_runs_and_a_recovery_whose_answer_was_lost(browser, service, api, prepare) -> None:
    ds = prepare("mmlu-pro")
    with SimulatorThread(models=[SimModel("slow", skill=0.6, latency_s=0.3)]) as sim, \
            DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        api.ok("POST", "/targets", {"targets": [single("slow", sim.v1_url)]})
        m = manifest(ds, [{"id": "slow"}], name="browser-run")
        m["limits"]["concurrency"] = 1
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        api.wait(run_id, until=lambda r: r["progress"]["completed"] >= 2)
        api.ok("POST", f"/runs/{run_id}/cancel")
        parent = api.wait(run_id)
        pending = parent["progress"]["pending"]
        assert parent["status"] == "cancelled" and pending >= 5

        context = browser.new_context()
        page = context.new_page()
        page.goto(dash.url + "/")                                      # not signed in: the sign-in page
        assert page.url.endswith("/login")
        page.fill("input[name=key]", "wrong-key-0000000000")
        page.click("button[type=submit]")
        assert page.locator("p.error").inner_text().startswith("That is not the key")
        page.fill("input[name=key]", KEY)
        page.click("button[type=submit]")
        row = page.locator("tr.link", has_text="browser-run")
        row.wait_for()
        assert "cancelled" in row.inner_text() and "slow (single, slow)" in row.inner_text()
        assert service.token not in page.content() and page.evaluate("document.cookie") == ""   # HttpOnly

        context.set_offline(True)                                      # UI-1: polling survives a network loss
        page.locator("#conn.lost").wait_for(timeout=10_000)
        context.set_offline(False)
        page.locator("#conn:not(.lost)").wait_for(timeout=10_000)

        row.click()
        page.locator("h1", has_text="browser-run — cancelled").wait_for()
        page.locator("#recovery button", has_text="Review recovery plan").click()
        page.locator("#recovery table tbody tr").first.wait_for()
        assert page.locator("#recovery table tbody tr").count() == pending

        sent = len(sim.log)
        lost = []

        def lose_the_answer(route: object) -> None:                   # the service answers; the tab never sees it
            lost.append(route.fetch().status)
            route.abort()
        page.route("**/api/runs/*/recover", lose_the_answer)
        page.locator("#recovery button", has_text="Start recovery run").click()
        page.locator("#recovery button", has_text="Re-send the same request").wait_for()
        assert lost == [201]
        page.unroute("**/api/runs/*/recover")
        key = page.evaluate(f"JSON.parse(sessionStorage.getItem('srbench.recovery.{run_id}')).idempotency_key")
        assert key.startswith("dashboard-")
        page.locator("#recovery button", has_text="Re-send the same request").click()
        wait_true(page, f"!location.hash.includes('{run_id}')")
        child_id = page.evaluate("decodeURIComponent(location.hash.split('/')[2].split('?')[0])")
        assert api.wait(child_id, timeout=60)["status"] == "completed"
        assert api.ok("GET", f"/runs/{run_id}")["lineage"]["children"] == [child_id]   # one child, not two
        assert len(sim.log) - sent == pending                         # each pending cell sent once
        assert page.evaluate(f"sessionStorage.getItem('srbench.recovery.{run_id}')") is None
        page.locator("h1", has_text="completed").wait_for(timeout=30_000)
        page.locator(f"p.lineage a[href='#/run/{run_id}']").click()           # child → parent …
        page.locator("h1", has_text="browser-run — cancelled").wait_for()
        page.locator(f"p.lineage a[href='#/run/{child_id}']").wait_for()       # … and parent → child
        context.close()


def test_create_evaluation_reviews_a_frozen_plan_then_launches(browser, service, api, prepare, sim) -> None:
    prepare("mmlu-pro")
    prepare("arc-agi-2")
    api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url, "sim-strong", request_params={"max_tokens": 512})]})
    with DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        page = browser.new_page()
        sign_in(page, dash.url, KEY)
        page.goto(dash.url + "/#/datasets")                             # UI-3: filter, open, tasks by 25
        page.locator("tr.link").nth(1).wait_for()
        assert page.locator("tr.link").count() == 2 and "smoke 16" in page.locator("#view").inner_text()
        page.get_by_label("benchmark").select_option("arc-agi-2")
        wait_true(page, "document.querySelectorAll('tr.link').length === 1")
        page.locator("tr.link").click()
        page.get_by_role("button", name="Evaluate dataset").wait_for()
        assert "of 2 tasks" in page.locator("#view").inner_text()
        page.goto(dash.url + "/#/create?profile=smoke")
        page.get_by_label("Select all benchmarks").check()
        page.locator("tr", has_text="sim-strong").locator("input[type=checkbox]").check()
        page.get_by_role("button", name="Review plan").click()
        review = page.locator("#review")
        review.get_by_role("button", name="Launch run (16 model calls planned)").wait_for()
        assert '"max_tokens":512' in review.inner_text()                   # the pinned parameter, read-only
        assert "Per-benchmark sizes (" in review.inner_text()              # issue 43: sized per benchmark
        assert api.run_count() == 0 and sim.log == []                      # reviewing sends nothing
        review.get_by_role("button", name="Launch run (16 model calls planned)").click()
        page.locator("h1", has_text="completed").wait_for(timeout=30_000)
        runs = api.ok("GET", "/runs")["runs"]
        assert len(runs) == 1 and runs[0]["progress"]["completed"] == 16 and len(sim.log) == 16
        page.get_by_role("tab", name="questions").click()            # UI-5: tasks × targets, answers on demand
        first = page.locator("tr.link").first
        first.wait_for()
        assert page.locator("tr.link").count() == 16 and ("correct" in first.inner_text() or "wrong" in first.inner_text())
        first.click()
        assert "Answer" in page.locator("tr.detail .text").first.inner_text(timeout=10_000)
        page.get_by_role("tab", name="evidence").click()
        page.locator("summary", has_text="Config-hash checks").wait_for()
        page.get_by_role("tab", name="recipe").click()
        page.locator("#view", has_text="unavailable").wait_for()           # the tab renders after the click

        rid = runs[0]["id"]              # UI-6: the same plan run again (never compared with itself)
        again = api.ok("POST", "/runs", {"manifest": api.ok("GET", f"/objects/{runs[0]['plan']}")})["id"]
        api.wait(again)
        page.goto(dash.url + f"/#/compare?baseline={rid}&candidates={again}")
        page.locator(".charts svg").nth(1).wait_for()
        row = page.locator("tbody tr", has_text="m (single)")
        assert "+0.000" in row.inner_text() and "inconclusive" in row.inner_text()   # never an improvement
        with page.expect_download() as got:
            page.get_by_role("button", name="Export CSV").click()
        csv = open(got.value.path()).read().splitlines()
        assert csv[0].startswith("candidate_run,target,kind,quality") and len(csv) == 2 and ",inconclusive," in csv[1]
