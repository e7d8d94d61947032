"""Issue 15 in a real Chromium: the "Does routing pay?" headline, readable evidence, charts, recipes
(captured from the simulated router's config API and diffed on Compare), preview detail, axe-core clean
of critical and serious findings on every page at 1280 and 390 px, and the keyboard path "open a run
from the list, switch tabs, open a call". A screenshot of every page goes to a temporary folder."""

from __future__ import annotations

import json
import re

from srbench.simulate import preview as sim_preview
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread

from .browser import check_page, needs_chromium, sign_in, tab_until, wait_true
from .helpers import PRICE, DashboardThread, freeze, manifest, single

pytestmark = needs_chromium
KEY = "pages-key-0123456789abcdef"
MODELS = [SimModel("strong", skill=0.85, cached_fraction=0.5), SimModel("weak", skill=0.4)]
RULE7 = RouterRule(strong="strong", weak="weak", long_prompt_chars=1500, keywords=("math", "physics"), config_hash="cfg-7")
RULE8 = RouterRule(strong="strong", weak="weak", long_prompt_chars=900, keywords=("math", "law"), config_hash="cfg-8")


def _mom(sim: SimulatorThread, config_hash: str) -> dict:
    return {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": {"strong": PRICE, "weak": PRICE},
            "config_hash": config_hash, "max_inference_calls": 1, "preview_url": sim.router_url + "/preview",
            "capture_recipe": True, "models": ["strong", "weak"]}


def _run(api, ds, targets, **extra) -> str:
    rid = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": t} for t in targets], **extra))})["id"]
    assert api.wait(rid, timeout=60)["status"] == "completed"
    return rid


def _world(api, prepare, sim) -> dict:
    ds = api.ok("POST", "/datasets/combine", {"manifests": [prepare("mmlu-pro"), prepare("arc-agi-2")]})
    sim.server.answer_key.update(load_answer_key(ds["path"]))
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url), single("weak", sim.v1_url), _mom(sim, "cfg-7")]})
    out = {"ds": ds, "within": _run(api, ds, ["strong", "weak", "mom"], name="within-run")}
    sim.server.router = sim.server.router_config.rule = RULE8        # the operator changed the router
    api.ok("POST", "/targets", {"targets": [_mom(sim, "cfg-8")]})
    out["router1"] = _run(api, ds, ["mom"], name="router-iteration-1")
    out["router2"] = _run(api, ds, ["mom"], name="router-iteration-2")
    sim.server.router_config.failing["/config/router/recipes"] = 403
    out["preview"] = _run(api, ds, ["mom"], name="route-preview", mode="preview")
    return out


def _texts(page, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def test_every_page_headline_evidence_charts_recipes_preview_and_keyboard(browser, axe, shots, service, api, prepare,
                                                                           monkeypatch) -> None:
    real = sim_preview.preview_payload

    def with_plugins(router, body):           # the router's cheap route runs a decision plugin
        out = real(router, body)
        if out["decision"] == router.weak_decision:
            out["plugins"] = ["pii-check"]
        return out
    monkeypatch.setattr(sim_preview, "preview_payload", with_plugins)
    with SimulatorThread(models=MODELS, router=RULE7) as sim, \
            DashboardThread(make_dashboard_for(service)) as dash:
        w = _world(api, prepare, sim)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(dash.url + "/login")
        check_page(page, axe, shots, "login")
        sign_in(page, dash.url, KEY)

        # -- the keyboard path: open a run from the list, switch tabs, open a call (no mouse) ----------
        page.locator("a", has_text="within-run").wait_for()
        check_page(page, axe, shots, "runs")
        page.locator("body").focus()
        tab_until(page, f"el.getAttribute('href') === '#/run/{w['within']}'")
        page.keyboard.press("Enter")
        page.locator("h1", has_text="within-run — completed").wait_for()
        page.locator("article.router h3").wait_for()
        tab_until(page, "el.getAttribute('role') === 'tab'")
        assert page.evaluate("document.activeElement.textContent") == "results"
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.textContent") == "calls"
        assert page.get_by_role("tab", name="calls").get_attribute("aria-selected") == "true"
        assert "tab=calls" in page.url
        page.locator("#run-panel button.open").first.wait_for()
        tab_until(page, "el.matches('#run-panel button.open')")
        page.keyboard.press("Enter")
        detail = page.locator("tr.detail dl.fields").first
        detail.wait_for()
        assert page.evaluate("document.activeElement.getAttribute('aria-expanded')") == "true"

        # -- 3: a call as fields, raw JSON behind a toggle, no float residue --------------------------
        assert "http status" in detail.inner_text() and "200" in detail.inner_text()
        raw = page.locator("tr.detail details.raw-json").first
        assert raw.get_attribute("open") is None and raw.locator("pre").inner_text() == ""
        raw.locator("summary").click()
        raw.locator("pre", has_text='"record"').wait_for()      # filled on the toggle event (a queued task)
        assert page.evaluate("[fmt.num(1.3877787807814457e-17), fmt.auto(1.3877787807814457e-17), fmt.signed(-1e-9), "
                             "fmt.auto(0.123456789), fmt.usd(0.000012345), fmt.auto(0.0007972), fmt.auto(6e-7)]") == \
            ["0.000", "0", "+0.000", "0.1235", "$0.00001", "0.000797", "0.000001"]
        shown = page.evaluate("""() => { const v = document.querySelector('#view').cloneNode(true);
            v.querySelectorAll('.raw-json').forEach(e => e.remove()); document.body.append(v);
            const t = v.innerText; v.remove(); return t; }""")
        assert not re.search(r"\de-\d|\d\.\d{7,}", shown)               # only the raw JSON has full floats
        check_page(page, axe, shots, "run-calls-open")

        # -- 1: "Does routing pay?" on the run page, the same figures as `compare RUN` ----------------
        cmp = api.ok("POST", "/comparisons", {"baseline_run_id": w["within"], "candidate_run_id": w["within"]})
        (router,) = [c for c in cmp["candidates"] if c["kind"] == "mom"]
        head = page.locator("section.headline")
        assert head.locator("h2").inner_text() == "Does routing pay?"
        title = head.locator("article.router h3").inner_text()
        assert title == f"mom vs {cmp['baseline']['target_id']} — {router['claim']}"
        big = head.locator("article.router .big").inner_text()
        lo, hi = router["interval"]["ci"]
        assert f"Δ macro quality {router['delta']:+.3f} [{lo:+.3f}, {hi:+.3f}]" in big
        assert router["claim_rule"] == "betting" and router["selection"]["k"] == 2      # a new plan (issue 28)
        assert ("95% paired betting interval, adjusted for choosing the strongest of K = 2 singles" in big
                and f"{router['n']} paired cases" in big)
        savings = _texts(page, "section.headline article.router table >> nth=0 >> tbody tr")
        assert [s.split("\t")[0] for s in savings] == ["principal (the model calls)", "total (with judge/simulator calls)",
                                                       "cache-neutral (every input token uncached)"]
        assert all("%" in s or "unknown:" in s for s in savings)
        mix = _texts(page, "section.headline ul.mix li")
        assert mix and all(re.fullmatch(r"(strong|weak): \d+ calls \(\d+%\)", m) for m in mix)
        bench = _texts(page, "section.headline .per-benchmark tbody tr")
        assert [b.split("\t")[0] for b in bench] == ["arc-agi-2", "mmlu-pro"]
        assert all(re.search(r"[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", b) for b in bench)
        assert "micro Δ (every case weighted equally)" in head.inner_text()
        assert "micro accuracy = correct / all planned cells pooled" in page.locator("#summary").inner_text()
        assert head.locator("summary", has_text="Other single models against").count() == 1   # weak, not the baseline itself

        # a router-only run: the baseline run is chosen for it, and says so
        page.goto(dash.url + f"/#/run/{w['router1']}")
        page.locator("section.headline article.router h3").wait_for()
        assert "(chosen: the newest finished run with a single model on the same cases and protocol)" in page.locator(
            "section.headline").inner_text()
        assert page.locator("#baseline-run").input_value() == w["within"]
        check_page(page, axe, shots, "run-router-only")

        # -- 5: the recipe captured from the router's own API -----------------------------------------
        page.goto(dash.url + f"/#/run/{w['within']}?tab=recipe")
        page.locator("h2", has_text="Recipe of mom — captured").wait_for()
        view = page.locator("#run-panel").inner_text()
        assert "escalate-hard-prompts" in view and "cfg-7" in view and "unchanged (hash and ETag)" in view
        with page.expect_download() as got:
            page.get_by_role("button", name="Download recipe (JSON, redacted)").click()
        exported = json.loads(open(got.value.path()).read())
        assert exported["config_hash"] == "cfg-7" and exported["recipes"][0]["routing"]["keywords"] == ["math", "physics"]
        assert "sk-sim-secret-key" not in json.dumps(exported) and "127.0.0.1" not in json.dumps(exported)
        check_page(page, axe, shots, "run-recipe")
        for tab in ("results", "questions", "evidence", "events"):
            page.get_by_role("tab", name=tab).click()
            page.locator("#run-panel table, #run-panel details").first.wait_for()
            check_page(page, axe, shots, "run-" + tab)
        page.goto(dash.url + f"/#/run/{w['preview']}?tab=recipe")
        page.locator("h2", has_text="Recipe of mom — not captured").wait_for()
        assert "GET /config/router/recipes answered HTTP 403" in page.locator("#run-panel").inner_text()

        # -- 6: preview detail per question ----------------------------------------------------------
        page.get_by_role("tab", name="questions").click()
        summary = page.locator("#run-panel > .tab-body > p").first
        summary.wait_for()
        results = api.ok("GET", f"/runs/{w['preview']}/results")["results"]
        needing = sum(1 for r in results if r["needs_real_run"])
        assert 0 < needing < len(results)
        assert summary.inner_text().startswith(f"{needing} of {len(results)} selections on this page would still need a real run")
        assert "decision plugins ran" in summary.inner_text()
        weak = page.locator("#run-panel tbody tr", has_text="needs a real run").first
        assert "→ weak · simple_knowledge" in weak.inner_text()
        weak.locator("button.open").click()
        route = page.locator("tr.detail .route").first
        route.wait_for()
        text = route.inner_text()
        assert "selection reason" in text and "static rule: prompt length and keywords" in text
        assert "needed: decision plugins ran" in text and "Selection provenance" in text and "cfg-8" in text
        check_page(page, axe, shots, "run-preview-questions")

        # -- 8: an experiment lists its iterations with their headline figures; Compare starts there ----
        exp = api.ok("POST", "/experiments", {"name": "keyword routing"})["id"]
        for rid, role, why in ((w["within"], "baseline", "today's models and router"),
                               (w["router1"], "candidate", "route law questions to the strong model"),
                               (w["router2"], "candidate", "the same again")):
            api.ok("POST", f"/experiments/{exp}/runs", {"run_id": rid, "role": role, "hypothesis": why})
        page.goto(dash.url + "/#/experiments")
        page.locator("a", has_text="keyword routing").click()
        page.locator("h1", has_text="keyword routing").wait_for()
        rows = page.locator("#view tbody tr")
        rows.nth(2).wait_for()
        texts = rows.all_inner_texts()
        assert [t.split("\t")[0] for t in texts] == ["baseline", "dev candidate", "dev candidate"]
        assert "mom vs strong: Δ" in texts[0]          # a baseline run with a router: its own comparison
        for t in texts[1:]:
            assert re.search(r"mom vs strong: Δ [+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\] → \w+; saving", t), t
        assert "route law questions to the strong model" in texts[1]
        check_page(page, axe, shots, "experiment")
        page.locator("a", has_text="Compare these iterations").click()
        page.locator("h1", has_text="Compare iterations").wait_for()
        assert f"baseline={w['within']}" in page.url and f"candidates={w['router1']}%2C{w['router2']}" in page.url

        # -- 4 and 5: Compare — charts with titles, zero, legend, one colour per run; the recipe diff ----
        page.goto(dash.url + f"/#/compare?baseline={w['within']}&candidates={w['router1']},{w['router2']}")
        page.reload()                  # one render of this URL only (a hash change re-renders the open page)
        figures = page.locator("figure.chart")
        figures.nth(1).wait_for()
        # both charts drawn (titles come with the axes)
        wait_true(page, "[...document.querySelectorAll('figure.chart')].slice(0, 2)"
                        ".filter(f => f.querySelectorAll('text.axis-title').length === 2).length === 2")
        for i in range(2):
            fig = figures.nth(i)
            assert fig.locator("text.axis-title").count() == 2
            ticks = fig.locator("text.tick").all_text_contents()
            assert "0.0" in ticks or "0" in ticks or "$0.00" in ticks
        assert figures.nth(0).locator("ul.legend li").count() == 3            # two runs and the baseline
        assert figures.nth(1).locator("ul.legend li").count() == 2            # one series per run
        xticks = figures.nth(1).locator("text.tick title").all_text_contents()
        assert xticks == [f"router-iteration-1 · {w['router1'][-6:]}", f"router-iteration-2 · {w['router2'][-6:]}"]
        boxes = page.evaluate("""() => [...document.querySelectorAll('figure.chart')].map(f =>
            [...f.querySelectorAll('text.point-label')].map(t => { const r = t.getBoundingClientRect();
              return [r.left, r.top, r.right, r.bottom]; }))""")
        for labels in boxes:
            for i, a in enumerate(labels):
                for b in labels[i + 1:]:
                    assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
        diff = page.locator("section", has_text="Recipe changes between iterations")
        diff.locator("h3").nth(1).wait_for()
        changed = diff.locator("table").first.inner_text()
        assert "keywords" in changed and '"physics"' in changed and '"law"' in changed
        assert "The same recipe" in diff.inner_text()                          # iteration 1 → 2: unchanged
        check_page(page, axe, shots, "compare")

        for name, path in (("create", "/#/create"), ("datasets", "/#/datasets"), ("dataset", f"/#/dataset/{w['ds']['id']}"),
                           ("experiments", "/#/experiments")):
            page.goto(dash.url + path)
            page.locator("h1").wait_for()
            page.locator("#view table").first.wait_for()
            check_page(page, axe, shots, name)
        assert page.locator("h1").count() == 1
        assert errors == [], errors


def make_dashboard_for(service):
    from srbench.dashboard import make_dashboard

    return make_dashboard(service.url, service.token, KEY)
