"""Issue 43 in a real Chromium: the Dashboard's Diagnose routing page shows the service's stored diagnosis of a
router run against a singles run — the headline figures, the quality–cost plane with the singles, the router, the
oracle ceiling and the cheapest-correct oracle, the regret and confusion tables and the losses, each opening both
answers in place — fits a phone's width, exports the outcome matrix and never shows a console error."""

from __future__ import annotations

from pathlib import Path

from srbench.dashboard import make_dashboard
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread

from .browser import PHONE, needs_chromium, sign_in
from .helpers import DashboardThread, freeze, manifest, single
from .test_diagnose_service import PRICES

pytestmark = needs_chromium
KEY = "diagnose-key-0123456789abcdef"


def test_diagnose_page(browser, shots: Path, service, api, prepare) -> None:
    ds = prepare("mmlu-pro")
    router = RouterRule(strong="weak", weak="strong", long_prompt_chars=10**9, keywords=("law",), config_hash="cfg-43")
    models = [SimModel("strong", skill=0.5), SimModel("weak", skill=0.9)]
    with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"])) as sim, \
            DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        api.ok("POST", "/targets", {"targets": [
            single("strong", sim.v1_url, prices={"strong": PRICES["strong"]}),
            single("weak", sim.v1_url, prices={"weak": PRICES["weak"]}),
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": PRICES,
             "config_hash": "cfg-43", "preview_url": sim.router_url + "/preview", "max_inference_calls": 1,
             "models": ["strong", "weak"]}]})
        ids = {}
        for name, targets in (("singles", ["strong", "weak"]), ("router", ["mom"])):
            ids[name] = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": t} for t in targets],
                                                                                  name=name))})["id"]
            assert api.wait(ids[name])["status"] == "completed"
        want = api.ok("GET", f"/runs/{ids['router']}/diagnose?baseline={ids['singles']}")
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        sign_in(page, dash.url, KEY)
        page.goto(dash.url + "/#/diagnose")
        page.locator("p", has_text="Pick a baseline run and a candidate run.").wait_for()
        page.select_option("#diag-baseline", ids["singles"])
        page.locator("p", has_text="Pick a baseline run").wait_for()
        page.select_option("#diag-candidate", ids["router"])
        head = page.locator("section.headline")
        head.wait_for(timeout=30_000)
        text = head.inner_text()
        r = want["routers"][0]
        assert f"{want['oracle']['cases_no_single_correct']} of {want['cases']} cases no single gets" in text, text
        assert "optimal selection" in text and f"mom: {r['quality']:.3f}" in text, text
        legend = page.locator("figure.chart ul.legend li").all_inner_texts()
        assert legend == ["single models", "routers", "oracle ceiling", "cheapest-correct oracle"], legend
        assert page.locator("figure.chart > svg .mark").count() == 5         # 2 singles, 1 router, 2 oracles
        assert page.locator("[aria-label='mom regret per benchmark and subject'] tbody tr").count() == len(r["regret"])
        losses = page.locator("[aria-label='mom losses'] tbody tr")
        assert losses.count() == len(r["losses"]) > 0
        losses.first.locator("button", has_text="both answers").click()
        detail = page.locator("tr.detail")
        detail.locator("h4", has_text="Router").wait_for()
        assert r["losses"][0]["router"]["cell_id"] in detail.inner_text()
        with page.expect_download() as got:
            page.locator("button", has_text="Export CSV").click()
        lines = Path(got.value.path()).read_text().splitlines()
        assert lines[0].startswith("router,case_id,benchmark") and len(lines) == 1 + want["cases"]
        page.screenshot(path=str(shots / "diagnose-1280.png"), full_page=True)
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(150)
        page.screenshot(path=str(shots / "diagnose-390.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert errors == [], errors
