// sr-bench Dashboard — Create evaluation (UI-2): prepared sources, targets, form controls, plan review, launch.
// Every value is put into the page as text, never as HTML.
"use strict";

// -- Create evaluation (UI-2) ----------------------------------------------------------------------
const LIMIT_FIELDS = [["concurrency", "concurrency per target", 4], ["total_timeout_s", "call timeout s", 180],
  ["idle_timeout_s", "stream idle timeout s", 30], ["case_timeout_s", "task time limit s", 600],
  ["max_run_seconds", "run time limit s", 1800], ["max_output_tokens", "output token cap", 4096],
  ["max_cost_usd", "budget USD (reservation, not a provider cap; empty: none)", 5]];

async function createView(q) {
  clearTimeout(timer);
  const [dsets, regs] = await Promise.all([allDatasets(), api("/targets")]);
  const profile = q.get("profile") || "quick";
  const datasets = dsets.filter((d) => d.profile === profile);
  const preset = q.get("dataset");
  const dsChecks = datasets.map((d) => h("input", { type: "checkbox", value: d.id, checked: d.id === preset }));
  const all = h("input", { type: "checkbox", on: { change: (e) => dsChecks.forEach((c, i) => {
    c.checked = e.target.checked && datasets[i].benchmarks.length === 1; }) } });
  const tChecks = regs.targets.map((t) => h("input", { type: "checkbox", value: t.id }));
  const name = h("input", { value: "dashboard-" + profile });
  const mode = h("select", {}, h("option", { value: "live" }, "live"), h("option", { value: "preview" }, "preview (route only, no score)"));
  const session = h("input", { placeholder: "optional" });
  const conversation = h("input", { placeholder: "optional" });
  const policy = h("select", {}, h("option", { value: "require_priced" }, "require_priced"),
    h("option", { value: "capability_only" }, "capability_only (never claims savings)"));
  const temperature = h("input", { type: "number", step: "0.1", min: "0", value: "0" });
  const maxTokens = h("input", { type: "number", min: "1", placeholder: "model default" });
  const limits = LIMIT_FIELDS.map(([k, label, v]) => [k, h("label", {}, label, h("input", { type: "number", min: "0", step: "any", value: v }))]);
  const rule = h("select", {}, h("option", { value: "hoeffding" }, "hoeffding (REP-6, fixed size)"),
    h("option", { value: "betting" }, "betting (anytime-valid, tighter when pairs tie)"));
  const margin = h("input", { type: "number", min: "0", max: "1", step: "0.005", placeholder: "none" });
  const effect = h("input", { type: "number", min: "0.001", max: "1", step: "0.01", value: "0.05" });
  const ties = h("input", { type: "number", min: "0", max: "0.99", step: "0.05", value: "0.5" });
  const stopEarly = h("input", { type: "checkbox" });
  const review = h("div", { id: "review" });
  const profiles = ["smoke", "quick", "standard"].map((p) => h("label", { class: "inline" }, h("input", { type: "radio", name: "profile", checked: p === profile,
    on: { change: () => { q.set("profile", p); q.delete("dataset"); go(["create"], q); } } }), " " + p + (p === "standard" ? " (holdout)" : p === "quick" ? " (dev)" : "")));
  show(h("h2", {}, "Create evaluation"), h("div", { class: "filters" }, profiles),
    h("h3", {}, "Prepared benchmarks (" + profile + ")"),
    datasets.length ? h("p", {}, h("label", {}, all, " Select all benchmarks")) : h("p", { class: "muted" }, "No dataset of this profile is prepared: use `sr-bench dataset prepare`."),
    table(["", "dataset", "benchmarks", "tasks", "seed", "split"], datasets.map((d, i) => h("tr", {}, h("td", {}, dsChecks[i]),
      h("td", {}, d.name), h("td", {}, d.benchmarks.join(", ")), h("td", {}, d.case_count), h("td", {}, d.seed), h("td", {}, d.split)))),
    h("h3", {}, "Targets"),
    table(["", "target", "kind", "model", "pinned request parameters (override the defaults)"], regs.targets.map((t, i) => h("tr", {},
      h("td", {}, tChecks[i]), h("td", {}, t.id), h("td", {}, t.kind), h("td", {}, t.model), h("td", {}, JSON.stringify(t.request_params || {}))))),
    h("h3", {}, "Run"),
    h("div", { class: "filters" }, h("label", {}, "name", name), h("label", {}, "mode", mode), h("label", {}, "cost policy", policy),
      h("label", {}, "preview session id", session), h("label", {}, "preview conversation id", conversation)),
    h("div", { class: "filters" }, h("label", {}, "temperature", temperature), h("label", {}, "max output tokens", maxTokens), limits.map(([, el]) => el)),
    h("h3", {}, "Statistics"),
    h("div", { class: "filters" }, h("label", {}, "claim rule", rule), h("label", {}, "non-inferiority margin (declared in advance)", margin),
      h("label", {}, "planning: effect to detect", effect), h("label", {}, "planning: assumed tie rate", ties),
      h("label", {}, stopEarly, " stop early once the claim is settled (betting; router vs the strongest single model of this run)")),
    h("button", { on: { click: () => reviewPlan() } }, "Review plan"), review);

  async function reviewPlan() {
    const chosen = datasets.filter((d, i) => dsChecks[i].checked);
    const ids = tChecks.filter((c) => c.checked).map((c) => ({ id: c.value }));
    if (!chosen.length || !ids.length) { put(review, h("p", { class: "error" }, "Choose at least one benchmark and one target.")); return; }
    try {
      const dataset = chosen.length === 1 ? chosen[0]       // one source used whole keeps its identity
        : await api("/datasets/combine", { method: "POST", body: JSON.stringify({ manifests: chosen }) });
      const sampling = { temperature: Number(temperature.value) };
      if (maxTokens.value) sampling.max_tokens = Number(maxTokens.value);
      const lim = {};
      for (const [k, el] of limits) {
        const v = el.querySelector("input").value;
        if (v !== "") lim[k] = Number(v); else if (k === "max_cost_usd") lim[k] = null;
      }
      const manifest = { version: "sr-bench-1.0", name: name.value, mode: mode.value, profile, seed: dataset.seed,
        cost_policy: policy.value, dataset: { path: dataset.path, sha256: dataset.sha256 }, targets: ids, sampling, limits: lim };
      if (mode.value === "live" && (rule.value !== "hoeffding" || margin.value !== "" || stopEarly.checked ||
          Number(effect.value) !== 0.05 || Number(ties.value) !== 0.5)) {
        manifest.statistics = { claim_rule: rule.value, margin: margin.value === "" ? null : Number(margin.value),
          planning: { effect: Number(effect.value), tie_rate: Number(ties.value) }, early_stop: stopEarly.checked ? {} : null };
      }
      if (mode.value === "preview" && (session.value || conversation.value)) {
        manifest.preview_context = { session_id: session.value || null, conversation_id: conversation.value || null };
      }
      const out = await api("/plans", { method: "POST", body: JSON.stringify({ manifest }) });
      showPlan(review, out.plan, out.planning);
    } catch (e) { put(review, h("p", { class: "error" }, e.message)); }
  }
}

// Sample-size planning of the plan response: the declared rule first, the other beside it.
function planningView(p) {
  if (!p) return null;
  const pts = (v) => (v === null || v === undefined ? "not reachable" : fmt.num(100 * v, 1) + " pts");
  const need = (n) => (n ? n.total + " (" + Object.entries(n.per_benchmark).map(([b, k]) => b + " " + k).join(", ") + ")" : "more than 10⁴× the plan");
  const a = p.assumptions;
  const row = (r, label) => h("tr", {}, h("td", {}, r.rule + label), h("td", {}, "±" + fmt.num(r.radius_at_zero, 4)), h("td", {}, pts(r.detectable_effect)),
    h("td", {}, r.power_at_effect === null ? "n/a" : fmt.pct(100 * r.power_at_effect)), h("td", {}, need(r.needed_for_effect)),
    h("td", {}, r.margin === null ? "no margin declared" : "margin " + r.margin + ": " + fmt.pct(100 * (r.power_non_inferiority || 0)) + " / " + need(r.needed_for_margin)));
  return h("div", {}, h("h4", {}, "Planning at " + fmt.num(100 * a.power, 0) + "% power, assumed tie rate " + fmt.num(100 * a.tie_rate, 0) + "%"),
    table(["rule", "radius at Δ=0", "smallest detectable effect", "power at +" + fmt.num(100 * a.effect, 1) + " pts",
      "cases for +" + fmt.num(100 * a.effect, 1) + " pts", "non-inferiority: power / cases"], [row(p.declared, " (makes claims)"), row(p.other, "")]),
    table(["tie rate", p.claim_rule + " detects", p.other.rule + " detects"], p.detectable_by_tie_rate.map((t) =>
      h("tr", {}, h("td", {}, fmt.num(100 * t.tie_rate, 0) + "%"), h("td", {}, pts(t[p.claim_rule])), h("td", {}, pts(t[p.other.rule]))))),
    p.early_stop ? h("p", {}, "Early stopping: dispatch stops once the claim is settled or unreachable (cases interleaved across benchmarks).") : null);
}

function showPlan(box, plan, planning) {
  const storageKey = "srbench.launch." + plan.plan_sha256;
  const launch = h("button", { on: { click: () => {
    const request = { plan, idempotency_key: "dashboard-" + crypto.randomUUID() };
    sendKept(box, storageKey, "/runs", request, "launch");
  } } }, "Launch run (" + plan.total + " model calls planned)");
  put(box, h("h3", {}, "Frozen plan " + plan.plan_sha256.slice(0, 16) + "…"),
    h("p", {}, plan.mode + " · " + plan.profile + " · dataset " + plan.dataset.id + " (" + plan.dataset.case_count + " tasks, " +
      plan.dataset.split + ") · " + plan.total + " cells · cost policy " + plan.cost_policy),
    table(["target", "kind", "model", "effective request parameters"], plan.targets.map((pt) => h("tr", {}, h("td", {}, pt.target.id),
      h("td", {}, pt.target.kind), h("td", {}, pt.target.model), h("td", {}, JSON.stringify(pt.effective_params))))),
    h("p", {}, "limits: " + JSON.stringify(plan.limits)),
    (plan.notices || []).length ? h("ul", {}, plan.notices.map((n) => h("li", {}, n))) : null,
    planningView(planning),
    h("p", { class: "muted" }, "Nothing has been sent to a model yet. Launching starts paid calls."), launch);
  const kept = sessionStorage.getItem(storageKey);
  if (kept) showKept(box, storageKey, "/runs", JSON.parse(kept), "A launch of this plan from this tab may not have been answered.", "launch");
}
