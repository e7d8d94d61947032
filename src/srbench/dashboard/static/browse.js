// sr-bench Dashboard — Compare iterations (UI-6) and Datasets (UI-3, UI-4).
// Every value is put into the page as text, never as HTML.
"use strict";

// -- Compare iterations (UI-6) -------------------------------------------------------------------
async function compareView(q) {
  clearTimeout(timer);
  const runs = (await api("/runs")).runs.filter((r) => r.mode === "live" && ["completed", "failed", "stopped_early"].includes(r.status))
    .sort((a, b) => a.created_at - b.created_at);
  const baseline = q.get("baseline") || "";
  const chosen = new Set((q.get("candidates") || "").split(",").filter(Boolean));
  const pick = h("select", { on: { change: (e) => { q.set("baseline", e.target.value); go(["compare"], q); } } },
    h("option", { value: "" }, "— baseline run (with a single model) —"),
    runs.filter((r) => r.target_info.some((t) => t.kind === "single")).map((r) =>
      h("option", { value: r.id, selected: r.id === baseline }, r.name + " · " + r.id)));
  const boxes = runs.filter((r) => r.id !== baseline).map((r) => h("label", { class: "muted" },
    h("input", { type: "checkbox", checked: chosen.has(r.id), on: { change: (e) => {
      if (e.target.checked) chosen.add(r.id); else chosen.delete(r.id);
      q.set("candidates", [...chosen].join(",")); go(["compare"], q);
    } } }), " " + r.name + " · " + r.id + " · " + fmt.time(r.created_at), h("br")));
  const out = h("div");
  show(h("h2", {}, "Compare iterations"), h("p", {}, pick), h("div", {}, boxes), out);
  if (!baseline || !chosen.size) { out.append(h("p", { class: "muted" }, "Pick a baseline and one or more candidates.")); return; }
  const lines = [];
  const rows = [];
  const notes = [];
  for (const cid of runs.map((r) => r.id).filter((r) => chosen.has(r))) {
    let cmp;
    try {
      cmp = (await api("/comparisons", { method: "POST", body: JSON.stringify({ baseline_run_id: baseline, candidate_run_id: cid }) })).comparison;
    } catch (e) { rows.push(h("tr", {}, h("td", {}, cid), h("td", { colspan: 12, class: "error" }, e.message))); continue; }
    const wall = (await api("/runs/" + encodeURIComponent(cid) + "/report")).report.summary.wall_time_s;
    for (const c of cmp.candidates) {
      const s = c.savings;
      const line = { candidate_run: cid, target: c.target_id, kind: c.kind, quality: c.quality, baseline: cmp.baseline.target_id,
        delta: c.delta, ci_low: c.interval.ci[0], ci_high: c.interval.ci[1], claim: c.claim, claim_rule: c.claim_rule,
        other_ci: c.intervals ? JSON.stringify(c.intervals[c.claim_rule === "betting" ? "hoeffding" : "betting"].ci) : null,
        cases: cmp.cases, label: cmp.evidence.label,
        saving_principal_pct: s.principal.saving_pct, saving_total_pct: s.total.saving_pct,
        saving_cache_neutral_pct: s.cache_neutral.saving_pct, latency_p50_s: c.operations.candidate.latency_p50_s,
        principal_cost_usd: s.principal.candidate_usd, baseline_quality: c.baseline_quality,
        baseline_cost_usd: s.principal.baseline_usd, tokens: fmt.tokens(c.operations.candidate.tokens), wall_time_s: wall };
      lines.push(line);
      notes.push(plannedLine(c));
      rows.push(h("tr", {}, h("td", {}, cid), h("td", {}, c.target_id + " (" + c.kind + ")"), h("td", {}, fmt.num(c.quality)),
        ...claimCells(c), h("td", {}, c.wins + "/" + c.losses + "/" + c.ties),
        h("td", {}, fmt.pct(s.principal.saving_pct)), h("td", {}, fmt.pct(s.total.saving_pct)),
        h("td", {}, fmt.pct(s.cache_neutral.saving_pct)), h("td", {}, line.tokens),
        h("td", {}, fmt.num(c.operations.candidate.latency_p50_s)), h("td", {}, fmt.num(wall, 1))));
    }
  }
  const download = (name, type, text) => {
    const a = h("a", { href: URL.createObjectURL(new Blob([text], { type })), download: name });
    document.body.append(a); a.click(); a.remove();
  };
  const csv = () => {
    const keys = Object.keys(lines[0] || {});
    const cell = (v) => (v === null || v === undefined ? "" : /[",\n]/.test(String(v)) ? '"' + String(v).replace(/"/g, '""') + '"' : String(v));
    return [keys.join(","), ...lines.map((l) => keys.map((k) => cell(l[k])).join(","))].join("\n") + "\n";
  };
  if (lines.length) out.append(h("div", { class: "charts" }, qualityCostChart(lines), iterationChart(lines)));
  out.append(table(["candidate run", "target", "macro quality", "Δ [95%] (claim rule)", "other rule", "claim", "W/L/T", "saving", "saving total",
    "saving cache-neutral", "tokens in/cached/write/out", "latency p50 s", "run wall time s"], rows),
    ...notes.filter(Boolean),
    h("p", { class: "muted" }, "\"improvement\" only when the whole interval is above zero; savings need complete metering. " +
      "Compared on the same cases against the strongest single model of the baseline run."),
    h("button", { disabled: !lines.length, on: { click: () => download("comparison.csv", "text/csv", csv()) } }, "Export CSV"),
    h("button", { disabled: !lines.length, on: { click: () => download("comparison.json", "application/json", JSON.stringify(lines, null, 2)) } }, "Export JSON"));
}

// Charts: plain SVG, no library. Unknown costs are left out of the cost axis and say so.
const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function frame(title, w, hgt) {
  const svg = svgEl("svg", { width: w, height: hgt, viewBox: "0 0 " + w + " " + hgt, role: "img", "aria-label": title });
  svg.append(svgEl("text", { x: 8, y: 14, class: "chart-title" }, title));
  return svg;
}

function qualityCostChart(lines) {
  const W = 460, H = 300, L = 50, R = 20, T = 30, B = 40;
  const svg = frame("Quality vs principal cost (USD)", W, H);
  const pts = lines.filter((l) => l.principal_cost_usd !== null && l.principal_cost_usd !== undefined);
  const base = lines.find((l) => l.baseline_cost_usd !== null && l.baseline_cost_usd !== undefined);
  const all = pts.map((l) => ({ x: l.principal_cost_usd, y: l.quality, label: l.target, cls: "pt" }));
  if (base) all.push({ x: base.baseline_cost_usd, y: base.baseline_quality, label: "baseline " + base.baseline, cls: "pt-base" });
  const maxX = Math.max(1e-9, ...all.map((p) => p.x)) * 1.1;
  const X = (v) => L + (v / maxX) * (W - L - R), Y = (v) => H - B - v * (H - T - B);
  svg.append(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }), svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }),
    svgEl("text", { x: L - 6, y: Y(1) + 4, "text-anchor": "end", class: "tick" }, "1"), svgEl("text", { x: L - 6, y: Y(0) + 4, "text-anchor": "end", class: "tick" }, "0"),
    svgEl("text", { x: W - R, y: H - B + 16, "text-anchor": "end", class: "tick" }, maxX.toFixed(4)));
  for (const p of all) {
    svg.append(svgEl("circle", { cx: X(p.x), cy: Y(p.y), r: 5, class: p.cls }), svgEl("text", { x: X(p.x) + 7, y: Y(p.y) - 6, class: "tick" }, p.label));
  }
  const missing = lines.length - pts.length;
  if (missing) svg.append(svgEl("text", { x: L, y: H - 8, class: "tick" }, missing + " candidate(s) with unknown cost not drawn"));
  return svg;
}

function iterationChart(lines) {
  const W = 460, H = 300, L = 50, R = 20, T = 30, B = 40;
  const svg = frame("Δ quality vs baseline with the claim rule's 95% interval, by iteration", W, H);
  const Y = (v) => T + (1 - (v + 1) / 2) * (H - T - B);
  const step = (W - L - R) / Math.max(1, lines.length);
  svg.append(svgEl("line", { x1: L, y1: Y(0), x2: W - R, y2: Y(0), class: "zero" }),
    svgEl("text", { x: L - 6, y: Y(1) + 4, "text-anchor": "end", class: "tick" }, "+1"), svgEl("text", { x: L - 6, y: Y(0) + 4, "text-anchor": "end", class: "tick" }, "0"),
    svgEl("text", { x: L - 6, y: Y(-1) + 4, "text-anchor": "end", class: "tick" }, "−1"));
  lines.forEach((l, i) => {
    const x = L + step * (i + 0.5);
    svg.append(svgEl("line", { x1: x, y1: Y(l.ci_high), x2: x, y2: Y(l.ci_low), class: "ci" }),
      svgEl("circle", { cx: x, cy: Y(l.delta), r: 4, class: "pt claim-" + l.claim }),
      svgEl("text", { x, y: H - B + 16, "text-anchor": "middle", class: "tick" }, l.target));
  });
  return svg;
}

// -- Datasets (UI-3, UI-4) -----------------------------------------------------------------------
async function allDatasets() {
  const out = [];
  for (let offset = 0; ; offset += 100) {
    const page = await api("/datasets?limit=100&offset=" + offset);
    out.push(...page.datasets);
    if (!page.datasets.length || out.length >= page.total) return out;
  }
}

async function datasetsView(q) {
  clearTimeout(timer);
  const all = await allDatasets();
  const text = (q.get("q") || "").toLowerCase();
  const list = all.filter((d) => (!q.get("profile") || d.profile === q.get("profile")) &&
    (!q.get("benchmark") || (d.benchmarks || []).includes(q.get("benchmark"))) &&
    (!text || JSON.stringify([d.name, d.id, d.benchmarks]).toLowerCase().includes(text)));
  const offset = Number(q.get("offset") || 0);
  const shown = list.slice(offset, offset + 25);
  const set = (k, v) => { q.set(k, v); if (!v) q.delete(k); q.delete("offset"); go(["datasets"], q); };
  const search = h("input", { type: "search", value: q.get("q") || "", on: { change: (e) => set("q", e.target.value) } });
  const choice = (key, values, any) => h("select", { on: { change: (e) => set(key, e.target.value) } },
    ["", ...values].map((v) => h("option", { value: v, selected: v === (q.get(key) || "") }, v || any)));
  const benchmarks = [...new Set(all.flatMap((d) => d.benchmarks || []))].sort();
  const totals = {};
  for (const d of all) totals[d.profile] = (totals[d.profile] || 0) + d.case_count;
  show(h("h2", {}, "Datasets"), h("div", { class: "filters" }, h("label", {}, "search", search),
      h("label", {}, "profile", choice("profile", ["smoke", "quick", "standard"], "any profile")),
      h("label", {}, "benchmark", choice("benchmark", benchmarks, "any benchmark"))),
    h("p", { class: "muted" }, "Tasks prepared per profile (a sum over prepared sets that may overlap: not a distinct count " +
      "and not a run's denominator): " + Object.entries(totals).map(([p, n]) => p + " " + n).join(", ")),
    pager(["datasets"], q, offset, 25, shown.length, list.length, "datasets"),
    table(["name", "profile", "split", "benchmarks", "tasks"], shown.map((d) => h("tr", { class: "link", on: { click: () => go(["dataset", d.id]) } },
      h("td", {}, d.name), h("td", {}, d.profile), h("td", {}, d.split), h("td", {}, (d.benchmarks || []).join(", ")), h("td", {}, d.case_count)))));
}

async function datasetView(id, q) {
  clearTimeout(timer);
  const d = await api("/datasets/" + encodeURIComponent(id));
  const offset = Number(q.get("offset") || 0);
  const params = new URLSearchParams({ offset, limit: 25 });
  if (q.get("benchmark")) params.set("benchmark", q.get("benchmark"));
  if (q.get("q")) params.set("q", q.get("q"));
  const page = await api("/datasets/" + encodeURIComponent(id) + "/cases?" + params);
  const set = (k, v) => { q.set(k, v); q.delete("offset"); go(["dataset", id], q); };
  show(h("p", {}, h("a", { href: "#/datasets" }, "← Datasets")), h("h2", {}, d.name + " (" + d.profile + ", " + d.split + ")"),
    h("p", { class: "muted" }, "Public questions may have been seen by a model; standard (holdout) tasks must not be used for tuning."),
    h("details", {}, h("summary", {}, "Provenance and hashes"), h("pre", {}, JSON.stringify(d, null, 2))),
    h("p", {}, h("button", { on: { click: () => go(["create"], new URLSearchParams({ profile: d.profile, dataset: d.id })) } }, "Evaluate dataset")),
    h("div", { class: "filters" },
      h("label", {}, "benchmark", h("select", { on: { change: (e) => set("benchmark", e.target.value) } },
        ["", ...(d.benchmarks || [])].map((b) => h("option", { value: b, selected: b === (q.get("benchmark") || "") }, b || "all")))),
      h("label", {}, "text", h("input", { type: "search", value: q.get("q") || "", on: { change: (e) => set("q", e.target.value) } }))),
    pager(["dataset", id], q, offset, 25, page.cases.length, page.total, "tasks"),
    table(["task", "benchmark", "subject", "instructions"], page.cases.map((c) => h("tr", {}, h("td", {}, c.id), h("td", {}, c.benchmark),
      h("td", {}, c.metadata.stratum), h("td", {}, h("pre", {}, c.messages.map((m) => m.role + ": " + m.content).join("\n\n")))))));
}
