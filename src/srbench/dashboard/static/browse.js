// sr-bench Dashboard — Datasets (UI-3, UI-4): search, profile and benchmark filters, 25 a page; one
// dataset's tasks by 25 (never a reference answer), provenance folded.
// Every value is put into the page as text, never as HTML.
"use strict";

async function datasetsView(q) {
  const alive = stopPolling();
  const all = await Api.datasets();
  const text = (q.get("q") || "").toLowerCase();
  const list = all.filter((d) => (!q.get("profile") || d.profile === q.get("profile")) &&
    (!q.get("benchmark") || (d.benchmarks || []).includes(q.get("benchmark"))) &&
    (!text || JSON.stringify([d.name, d.id, d.benchmarks]).toLowerCase().includes(text)));
  const offset = Number(q.get("offset") || 0);
  const shown = list.slice(offset, offset + 25);
  const set = (k, v) => { q.set(k, v); if (!v) q.delete(k); q.delete("offset"); go(["datasets"], q); };
  const search = h("input", { type: "search", id: "ds-search", value: q.get("q") || "", on: { change: (e) => set("q", e.target.value) } });
  const choice = (key, values, any) => h("select", { id: "ds-" + key, on: { change: (e) => set(key, e.target.value) } },
    ["", ...values].map((v) => h("option", { value: v, selected: v === (q.get(key) || "") }, v || any)));
  const benchmarks = [...new Set(all.flatMap((d) => d.benchmarks || []))].sort();
  const totals = {};
  for (const d of all) totals[d.profile] = (totals[d.profile] || 0) + d.case_count;
  if (!alive()) return;
  show(h("h1", {}, "Datasets"), h("div", { class: "filters" }, h("label", { for: "ds-search" }, "search", search),
      h("label", { for: "ds-profile" }, "profile", choice("profile", ["smoke", "quick", "standard"], "any profile")),
      h("label", { for: "ds-benchmark" }, "benchmark", choice("benchmark", benchmarks, "any benchmark"))),
    h("p", { class: "muted" }, "Tasks prepared per profile (a sum over prepared sets that may overlap: not a distinct count " +
      "and not a run's denominator): " + (Object.entries(totals).map(([p, n]) => p + " " + n).join(", ") || "none")),
    pager(["datasets"], q, offset, 25, shown.length, list.length, "datasets"),
    table(["name", "profile", "split", "benchmarks", "tasks"], shown.map((d) => h("tr", { class: "link", on: { click: (e) => { if (e.target.tagName !== "A") go(["dataset", d.id]); } } },
      h("td", {}, link(["dataset", d.id], null, d.name)), h("td", {}, d.profile), h("td", {}, d.split), h("td", {}, (d.benchmarks || []).join(", ")),
      h("td", {}, d.case_count))), { empty: "No dataset matches. Prepare one with `sr-bench dataset prepare`.", label: "datasets" }));
}

async function datasetView(id, q) {
  const alive = stopPolling();
  const d = await Api.dataset(id);
  const offset = Number(q.get("offset") || 0);
  const page = await Api.cases(id, offset, 25, { benchmark: q.get("benchmark"), q: q.get("q") });
  const set = (k, v) => { q.set(k, v); q.delete("offset"); go(["dataset", id], q); };
  if (!alive()) return;
  show(h("p", {}, h("a", { href: "#/datasets" }, "← Datasets")), h("h1", {}, d.name + " (" + d.profile + ", " + d.split + ")"),
    h("p", { class: "muted" }, "Public questions may have been seen by a model; standard (holdout) tasks must not be used for tuning."),
    section("Provenance and hashes", h("div", {}, fields(d, { skip: ["path"] }), rawToggle(d)), false),
    h("p", {}, h("button", { type: "button", on: { click: () => go(["create"], new URLSearchParams({ profile: d.profile, dataset: d.id })) } }, "Evaluate dataset")),
    h("div", { class: "filters" },
      h("label", { for: "case-benchmark" }, "benchmark", h("select", { id: "case-benchmark", on: { change: (e) => set("benchmark", e.target.value) } },
        ["", ...(d.benchmarks || [])].map((b) => h("option", { value: b, selected: b === (q.get("benchmark") || "") }, b || "all")))),
      h("label", { for: "case-text" }, "text", h("input", { type: "search", id: "case-text", value: q.get("q") || "", on: { change: (e) => set("q", e.target.value) } }))),
    pager(["dataset", id], q, offset, 25, page.items.length, page.total, "tasks"),
    table(["task", "benchmark", "subject", "instructions"], page.items.map((c) => h("tr", {}, h("td", {}, c.id), h("td", {}, c.benchmark),
      h("td", {}, c.metadata.stratum), h("td", {}, textBox(c.messages.map((m) => m.role + ": " + m.content).join("\n\n"))))),
    { empty: "No task matches.", label: "tasks" }));
}
