"""Issue 41 in a real Chromium: a run holding only a router weighs it against a baseline run that can answer
the question (completed and priced like it, on the same cases; a failed run only as "partial" with its reason),
its Baseline menu says why every other run is left out, and no choice sends a request the service refuses
(no console error); Compare opens with one verdict sentence per candidate, on screen at 1440×900 and first at
390 px; a benchmark without a judge shows no judge cost ("—"); the standing is the service's (dev, with its
reason); a failed run whose router answered nothing never titles its pair "vs — —"."""

from __future__ import annotations

from typing import Any

from srbench.dashboard import make_dashboard
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread

from .browser import PHONE, check_page, needs_chromium, sign_in, wait_true
from .helpers import DashboardThread, freeze, manifest, single
from .test_partial_runs import RULE, mom

pytestmark = needs_chromium
KEY = "baselines-key-0123456789abcdef"
WIDE = {"width": 1440, "height": 900}
BOOM = Fault(status=500, body='{"error": {"message": "boom"}}', label="500")


def _run(api, ds, targets: list[str], name: str, status: str = "completed", **extra: Any) -> str:
    rid = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": t} for t in targets], name=name,
                                                                        **extra))})["id"]
    got = api.wait(rid, timeout=60)
    assert got["status"] == status, got
    return rid


def _world(api, prepare, sim) -> dict[str, str]:
    ds, other = prepare("mmlu-pro"), prepare("gpqa-diamond")
    sim.server.answer_key.update(load_answer_key(ds["path"]))
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url), single("weak", sim.v1_url), mom(sim)]})
    w = {"priced": _run(api, ds, ["strong", "weak"], "base-priced")}
    sim.server.fault = lambda body: BOOM if body.get("model") == "MoM" else None      # the router answers nothing
    w["no-pair"] = _run(api, ds, ["weak", "mom"], "router-failed", status="failed")
    sim.server.fault = lambda body: BOOM if body.get("model") == "weak" else None     # weak answers nothing
    w["empty"] = _run(api, ds, ["weak"], "base-failed-empty", status="failed")
    sim.server.fault = None
    w["unpriced"] = _run(api, ds, ["strong"], "base-unpriced", cost_policy="capability_only")
    w["other"] = _run(api, other, ["strong"], "base-other-cases")
    w["router"] = _run(api, ds, ["mom"], "router-only")
    return w


def test_baseline_menu_verdicts_judge_cost_and_titles(browser, axe, shots, service, api, prepare) -> None:
    models = [SimModel("strong", skill=0.85), SimModel("weak", skill=0.4)]
    with SimulatorThread(models=models, router=RULE) as sim, \
            DashboardThread(make_dashboard(service.url, service.token, KEY)) as dash:
        w = _world(api, prepare, sim)
        page = browser.new_page(viewport=WIDE)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        refused: list[str] = []
        page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if "/api/" in r.url and r.status >= 400 else None)
        compares: list[str] = []
        page.on("request", lambda r: compares.append(r.post_data or "") if r.url.endswith("/api/comparisons") else None)
        sign_in(page, dash.url, KEY)

        # -- the service's answer: usable runs first, every other one with its reason ----------------------
        opts = api.ok("GET", f"/runs/{w['router']}/baselines")
        by = {o["run_id"]: o for o in opts["options"]}
        assert opts["chosen"] == w["priced"] and opts["own_single"] is False and opts["model_requests"] == 0
        assert [o["run_id"] for o in opts["options"] if o["usable"]] == [w["priced"], w["no-pair"]]
        assert by[w["no-pair"]]["partial"] == ("partial: failed with 14 of 28 cells answered; the unanswered count as "
                                               "incorrect")
        assert by[w["unpriced"]]["left_out"] == "unpriced (cost policy capability_only): every saving would be unknown"
        assert by[w["empty"]]["left_out"] == "failed before answering any cell"
        assert by[w["other"]]["left_out"] == "planned on other cases (another dataset, profile or seed)"

        # -- the router-only run: the priced, completed baseline is chosen and every saving is known -------
        page.goto(dash.url + f"/#/run/{w['router']}")
        head = page.locator("section.headline")
        head.locator("article.router h3").wait_for(timeout=30_000)
        menu = page.locator("#baseline-run")
        assert menu.input_value() == w["priced"]
        usable = menu.locator("optgroup[label='Runs that can answer it'] option").all_inner_texts()
        assert usable == [f"base-priced · {w['priced']}",
                          f"router-failed · {w['no-pair']} — {by[w['no-pair']]['partial']}"]
        left = menu.locator("optgroup[label='Left out'] option")
        assert all(left.nth(i).is_disabled() for i in range(left.count()))
        left_texts = left.all_inner_texts()
        for key in ("unpriced", "empty", "other"):
            assert f"{w[key]} — {by[w[key]]['left_out']}" in " | ".join(left_texts), left_texts
        assert "Runs left out as a baseline (3)" in head.inner_text()
        cmp = api.ok("POST", "/comparisons", {"baseline_run_id": w["priced"], "candidate_run_id": w["router"]})
        saving = head.locator("td.saving").first.inner_text()
        assert "unknown" not in saving and saving.endswith(")") and "%" in saving, saving
        # the standing is the service's, with its reason; the judge-less benchmark shows no judge cost
        assert f"Standing: {cmp['evidence']['label']} — {cmp['evidence']['reason']}" in head.inner_text()
        assert cmp["evidence"]["standing"] == "dev" and "smoke profile" in cmp["evidence"]["reason"]
        judge_cells = page.locator("table:has(caption:text('Principal cost apart')) tbody td:nth-child(3)")
        assert judge_cells.all_inner_texts() == ["—", "—"]
        page.locator("#summary h2").wait_for()
        assert "judge —)" in page.locator("#summary").inner_text()
        # the targets table's judge / simulator column (its 7th cell, after the row's heading)
        assert page.locator("#summary [aria-label=targets] tbody td:nth-child(7)").all_inner_texts() == ["—"]
        check_page(page, axe, shots, "router-only-run")

        # -- choosing the partial baseline: its reason shown, nothing refused ---------------------------------
        menu.select_option(w["no-pair"])
        wait_true(page, f"() => location.hash.includes('baseline={w['no-pair']}')")
        page.locator("p.partial-baseline").wait_for()
        assert page.locator("p.partial-baseline").inner_text() == f"Baseline router-failed is {by[w['no-pair']]['partial']}."
        # a left-out run asked for in the URL is never compared: the page says why
        sent = len(compares)
        page.goto(dash.url + f"/#/run/{w['router']}?baseline={w['unpriced']}")
        page.locator("p", has_text="No baseline to weigh the router against").wait_for()
        assert f"run {w['unpriced']} cannot be the baseline: unpriced" in head.inner_text()
        assert len(compares) == sent
        assert errors == [] and refused == [], (errors, refused)

        # -- a failed run whose router answered nothing: no "— —" in its pair's title --------------------------
        page.goto(dash.url + f"/#/run/{w['no-pair']}")
        title = page.locator("section.headline article.router h3")
        title.wait_for()
        assert title.inner_text() == "mom — partial: 0 of 14 planned cases answered by both sides"
        assert "— —" not in page.locator("#view").inner_text()

        # -- Compare: one verdict per candidate, first and on screen -------------------------------------------
        page.goto(dash.url + f"/#/compare?baseline={w['priced']}&candidates={w['router']}")
        verdict = page.locator("#verdicts li.verdict")
        verdict.first.wait_for(timeout=30_000)
        c = cmp["candidates"][0]
        s = c["savings"]["principal"]
        text = verdict.first.inner_text()
        assert text.startswith(f"mom (router-only) is {c['claim']} against {cmp['baseline']['target_id']}: Δ macro quality "
                               f"{c['delta']:+.3f} [{c['interval']['ci'][0]:+.3f}, {c['interval']['ci'][1]:+.3f}]"), text
        assert (f"saves {s['saving_pct']:.1f}%" if s["saving_pct"] >= 0 else f"costs {-s['saving_pct']:.1f}% more") in text
        assert text.endswith(f"{cmp['evidence']['label']} — {cmp['evidence']['reason']}."), text
        assert verdict.count() == 1
        assert f"(95% {c['claim_rule']}, adjusted for the strongest of K = 2, 14 paired cases)" in text
        box = verdict.first.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= WIDE["height"], box
        check_page(page, axe, shots, "compare-verdicts")
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(150)
        first = page.evaluate("[...document.querySelectorAll('#view > *')].map(e => e.id || e.tagName).slice(0, 2)")
        assert first == ["H1", "verdicts"], first
        box = verdict.first.bounding_box()
        assert box is not None and box["y"] + min(box["height"], 200) <= PHONE["height"], box
        assert errors == [] and refused == [], (errors, refused)

        # -- Compare with a candidate the baseline cannot answer for: its reason, and still no refused request --
        page.set_viewport_size(WIDE)
        page.goto(dash.url + f"/#/compare?baseline={w['unpriced']}&candidates={w['router']}")
        page.locator("#verdicts li.error").wait_for(timeout=30_000)
        assert page.locator("#verdicts li.error").inner_text() == (
            f"router-only: no verdict — not comparable with the baseline run: {by[w['unpriced']]['left_out']}")
        assert errors == [] and refused == [], (errors, refused)
