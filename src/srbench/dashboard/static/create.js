// sr-bench Dashboard — Create evaluation (UI-2): prepared sources of one profile (it opens on a profile
// that has data), registered targets (judges marked: they grade, they are not evaluated), form
// controls checked in the browser in the form's own words, then the frozen plan reviewed with its
// planned requests (judge calls included) and an upper cost estimate from the pinned prices. A dataset
// of several benchmarks offers each one: ticking a subset composes those benchmark groups (UI-2).
// Every value is put into the page as text, never as HTML.
"use strict";

const LIMIT_FIELDS = [
  ["concurrency", "concurrency per target", 4, { int: true, min: 1 }],
  ["total_timeout_s", "call timeout, s", 180, { min: 0, strict: true }],
  ["idle_timeout_s", "stream idle timeout, s", 30, { min: 0, strict: true }],
  ["case_timeout_s", "task time limit, s", 600, { min: 0, strict: true }],
  ["max_run_seconds", "run time limit, s", 1800, { min: 0, strict: true }],
  ["max_output_tokens", "output token cap", 4096, { int: true, min: 1 }],
  ["max_cost_usd", "budget, USD (a reservation, not a provider cap; empty: none)", 5, { min: 0, optional: true }]];
const PROFILES = ["smoke", "quick", "standard"];

function numberField(id, label, value, attrs) {
  const input = h("input", Object.assign({ id, type: "number", value: value ?? "", "aria-describedby": id + "-error" }, attrs || {}));
  const error = h("span", { class: "field-error", id: id + "-error" });
  return { input, error, label, el: h("label", { for: id }, label, input, error) };
}

// One field's rule in the form's words; returns the problem or null.
function checkNumber(f, rule) {
  const raw = f.input.value.trim();
  if (raw === "") return rule.optional ? null : "“" + f.label + "” needs a value";
  const v = Number(raw);
  if (!Number.isFinite(v)) return "“" + f.label + "” must be a number";
  if (rule.int && !Number.isInteger(v)) return "“" + f.label + "” must be a whole number";
  if (rule.min !== undefined && (rule.strict ? v <= rule.min : v < rule.min)) return "“" + f.label + "” must be " + (rule.strict ? "more than " : "at least ") + rule.min;
  if (rule.max !== undefined && v > rule.max) return "“" + f.label + "” must be at most " + rule.max;
  return null;
}

async function createView(q) {
  const alive = stopPolling();
  const [dsets, targets, setup] = await Promise.all([Api.datasets(), Api.targets(), Api.setup().catch(() => [])]);
  const withData = PROFILES.filter((p) => dsets.some((d) => d.profile === p));
  const profile = q.get("profile") || (withData.includes("quick") ? "quick" : withData[0] || "quick");
  const datasets = dsets.filter((d) => d.profile === profile);
  const preset = q.get("dataset");
  // judges (and user simulators) of judged benchmarks, from the store's benchmark-options
  const roles = {};
  for (const b of setup) for (const role of ["judge", "simulator", "user_simulator"]) if (b[role]) (roles[b[role]] = roles[b[role]] || []).push({ role, benchmark: b.benchmark });
  // a dataset of several benchmarks also offers each of its benchmarks: a subset is composed (UI-2)
  const benchChecks = datasets.map((d) => (d.benchmarks.length > 1 ? d.benchmarks.map((b) => h("input", { type: "checkbox", value: b,
    checked: d.id === preset, "aria-label": "use " + b + " of " + d.name })) : []));
  const dsChecks = datasets.map((d, i) => h("input", { type: "checkbox", value: d.id, checked: d.id === preset, "aria-label": "use " + d.name,
    on: { change: (e) => benchChecks[i].forEach((c) => { c.checked = e.target.checked; }) } }));
  benchChecks.forEach((boxes, i) => boxes.forEach((c) => c.addEventListener("change", () => {
    const n = boxes.filter((x) => x.checked).length;
    dsChecks[i].checked = n > 0;
    dsChecks[i].indeterminate = n > 0 && n < boxes.length;
  })));
  const picked = (i) => (benchChecks[i].length ? benchChecks[i].filter((c) => c.checked).map((c) => c.value)
    : dsChecks[i].checked ? datasets[i].benchmarks : []);
  const all = h("input", { type: "checkbox", id: "all-benchmarks", on: { change: (e) => dsChecks.forEach((c, i) => {
    c.checked = e.target.checked && datasets[i].benchmarks.length === 1; }) } });
  const tChecks = targets.map((t) => h("input", { type: "checkbox", value: t.id, "aria-label": "evaluate " + t.id }));
  const name = h("input", { id: "run-name", value: "dashboard-" + profile, "aria-describedby": "run-name-error" });
  const nameError = h("span", { class: "field-error", id: "run-name-error" });
  const mode = h("select", { id: "run-mode" }, h("option", { value: "live" }, "live"), h("option", { value: "preview" }, "preview (route only, no score)"));
  const session = h("input", { id: "preview-session", placeholder: "optional" });
  const conversation = h("input", { id: "preview-conversation", placeholder: "optional" });
  const policy = h("select", { id: "cost-policy" }, h("option", { value: "require_priced" }, "require_priced"),
    h("option", { value: "capability_only" }, "capability_only (never claims savings)"));
  const temperature = numberField("temperature", "temperature", 0, { step: "0.1", min: "0", max: "2" });
  const maxTokens = numberField("max-tokens", "max output tokens", "", { min: "1", placeholder: "model default" });
  const limits = LIMIT_FIELDS.map(([k, label, v, rule]) => [k, numberField("limit-" + k, label, v, { min: "0", step: "any" }), rule]);
  const rule = h("select", { id: "claim-rule" }, h("option", { value: "betting" }, "betting (default: anytime-valid, tighter when pairs tie)"),
    h("option", { value: "hoeffding" }, "hoeffding (REP-6, the seed's conservative interval, fixed size)"));
  const margin = numberField("margin", "non-inferiority margin (declared in advance)", "", { min: "0", max: "1", step: "0.005", placeholder: "none" });
  const effect = numberField("effect", "planning: effect to detect", 0.05, { min: "0.001", max: "1", step: "0.01" });
  const ties = numberField("ties", "planning: assumed tie rate", 0.5, { min: "0", max: "0.99", step: "0.05" });
  const stopEarly = h("input", { type: "checkbox", id: "stop-early" });
  const problems = h("div", { id: "problems", role: "alert" });
  const review = h("div", { id: "review" });
  const profiles = PROFILES.map((p) => h("label", { class: "inline" }, h("input", { type: "radio", name: "profile", checked: p === profile,
    on: { change: () => { q.set("profile", p); q.delete("dataset"); go(["create"], q); } } }),
  " " + p + (p === "standard" ? " (holdout)" : p === "quick" ? " (dev)" : "") + (withData.includes(p) ? "" : " — nothing prepared")));
  const roleText = (t) => (roles[t.id] || []).map((r) => (r.role === "judge" ? "judge" : "user simulator") + " of " + r.benchmark).join(", ");
  if (!alive()) return;
  show(h("h1", {}, "Create evaluation"), h("fieldset", { class: "filters" }, h("legend", {}, "Profile"), profiles),
    h("h2", {}, "Prepared benchmarks (" + profile + ")"),
    datasets.length ? h("p", {}, h("label", { for: "all-benchmarks" }, all, " Select all benchmarks")) : h("p", { class: "muted" }, "No dataset of this profile is prepared: use `sr-bench dataset prepare`."),
    table(["use", "dataset", "benchmarks", "tasks", "seed", "split"], datasets.map((d, i) => h("tr", {}, h("td", {}, dsChecks[i]),
      h("td", {}, d.name), h("td", {}, benchChecks[i].length ? d.benchmarks.map((b, j) => h("label", { class: "inline" }, benchChecks[i][j], " " + b + " "))
        : d.benchmarks.join(", ")), h("td", {}, d.case_count), h("td", {}, d.seed), h("td", {}, d.split))),
    { empty: "—", label: "prepared benchmarks" }),
    h("h2", {}, "Targets"),
    table(["evaluate", "target", "kind", "model", "role", "pinned request parameters (override the defaults)"], targets.map((t, i) => h("tr", { class: roles[t.id] ? "aux" : null },
      h("td", {}, tChecks[i]), h("td", {}, t.id), h("td", {}, t.kind), h("td", {}, t.model),
      h("td", {}, roles[t.id] ? h("strong", {}, roleText(t) + " — grades answers, not a subject") : "subject"),
      h("td", {}, h("code", {}, JSON.stringify(t.request_params || {}))))), { empty: "No target is registered: use `sr-bench target register`.", label: "targets" }),
    h("h2", {}, "Run"),
    h("div", { class: "filters" }, h("label", { for: "run-name" }, "name", name, nameError), h("label", { for: "run-mode" }, "mode", mode),
      h("label", { for: "cost-policy" }, "cost policy", policy),
      h("label", { for: "preview-session" }, "preview session id", session), h("label", { for: "preview-conversation" }, "preview conversation id", conversation)),
    h("div", { class: "filters" }, temperature.el, maxTokens.el, limits.map(([, f]) => f.el)),
    h("h2", {}, "Statistics"),
    h("div", { class: "filters" }, h("label", { for: "claim-rule" }, "claim rule", rule), margin.el, effect.el, ties.el,
      h("label", { for: "stop-early", class: "inline" }, stopEarly, " stop early once the claim is settled (betting; router vs the strongest single model of this run)")),
    problems, h("button", { type: "button", on: { click: () => reviewPlan() } }, "Review plan"), review);

  function validate(chosen, ids, benches) {
    const out = [];
    const mark = (f, msg) => { f.error.textContent = msg || ""; f.input.setAttribute("aria-invalid", msg ? "true" : "false"); if (msg) out.push(msg); };
    nameError.textContent = name.value.trim() ? "" : "Give the run a name.";
    name.setAttribute("aria-invalid", name.value.trim() ? "false" : "true");
    if (!name.value.trim()) out.push("Give the run a name.");
    if (!chosen.length) out.push("Tick at least one prepared benchmark.");
    if (!ids.length) out.push("Tick at least one target to evaluate.");
    const judged = new Set(benches.flat());
    const twice = [...judged].filter((b) => benches.filter((bs) => bs.includes(b)).length > 1);
    if (twice.length) out.push("Benchmark " + twice.join(", ") + " is ticked in two datasets; tick it in one.");
    for (const id of ids) {
      const busy = (roles[id] || []).filter((r) => judged.has(r.benchmark));
      if (busy.length) out.push("Target " + id + " is the " + busy.map((r) => (r.role === "judge" ? "judge" : "user simulator") + " of " + r.benchmark).join(" and ") +
        ": it grades the answers and cannot also be evaluated; untick it.");
    }
    const seeds = new Set(chosen.map((d) => d.seed)), splits = new Set(chosen.map((d) => d.split));
    if (seeds.size > 1 || splits.size > 1) out.push("The ticked benchmarks were prepared with different seeds or splits; tick sources of one seed and split.");
    mark(temperature, checkNumber(temperature, { min: 0, max: 2 }));
    mark(maxTokens, checkNumber(maxTokens, { int: true, min: 1, optional: true }));
    for (const [, f, r] of limits) mark(f, checkNumber(f, r));
    const lim = Object.fromEntries(limits.map(([k, f]) => [k, f]));
    const over = (a, b) => {            // the manifest's own order of the time limits, in the form's words
      if (lim[a].input.getAttribute("aria-invalid") === "true" || lim[b].input.getAttribute("aria-invalid") === "true") return;
      if (Number(lim[a].input.value) > Number(lim[b].input.value)) mark(lim[a], "“" + lim[a].label + "” must not exceed “" + lim[b].label + "”");
    };
    over("idle_timeout_s", "total_timeout_s");
    over("total_timeout_s", "max_run_seconds");
    mark(margin, checkNumber(margin, { min: 0, max: 1, optional: true }));
    mark(effect, checkNumber(effect, { min: 0, max: 1, strict: true }));
    mark(ties, checkNumber(ties, { min: 0, max: 0.99 }));
    if (stopEarly.checked && rule.value !== "betting") out.push("“stop early” needs the betting claim rule (the Hoeffding interval is not valid at a size the data chose).");
    if (mode.value === "preview" && !ids.some((id) => (targets.find((t) => t.id === id) || {}).kind === "mom")) out.push("A preview asks a router: tick a MoM target.");
    return out;
  }

  async function reviewPlan() {
    const use = datasets.map((d, i) => [d, picked(i)]).filter(([, bs]) => bs.length);
    const chosen = use.map(([d]) => d), benches = use.map(([, bs]) => bs);
    const whole = use.every(([d, bs]) => bs.length === d.benchmarks.length);
    const ids = tChecks.filter((c) => c.checked).map((c) => c.value);
    const found = validate(chosen, ids, benches);
    put(problems, found.length ? h("div", { class: "error" }, h("p", {}, "Please fix " + (found.length === 1 ? "this" : "these " + found.length) + " before the review:"),
      h("ul", {}, found.map((p) => h("li", {}, p)))) : null);
    put(review);
    if (found.length) return;
    try {
      const dataset = !whole ? await Api.compose(chosen.map((d) => d.id), benches.flat())   // whole benchmark groups only
        : chosen.length === 1 ? chosen[0]       // one source used whole keeps its identity
          : await Api.combine(chosen);
      const sampling = { temperature: Number(temperature.input.value) };
      if (maxTokens.input.value) sampling.max_tokens = Number(maxTokens.input.value);
      const lim = {};
      for (const [k, f] of limits) {
        const v = f.input.value;
        if (v !== "") lim[k] = Number(v); else if (k === "max_cost_usd") lim[k] = null;
      }
      const manifest = { version: "sr-bench-1.0", name: name.value.trim(), mode: mode.value, profile, seed: dataset.seed,
        cost_policy: policy.value, dataset: dataset.path ? { path: dataset.path, sha256: dataset.sha256 } : { sha256: dataset.sha256 }, targets: ids.map((id) => ({ id })), sampling, limits: lim };
      if (mode.value === "live" && (rule.value !== "betting" || margin.input.value !== "" || stopEarly.checked ||
          Number(effect.input.value) !== 0.05 || Number(ties.input.value) !== 0.5)) {
        manifest.statistics = { claim_rule: rule.value, margin: margin.input.value === "" ? null : Number(margin.input.value),
          planning: { effect: Number(effect.input.value), tie_rate: Number(ties.input.value) }, early_stop: stopEarly.checked ? {} : null };
      }
      if (mode.value === "preview" && (session.value || conversation.value)) {
        manifest.preview_context = { session_id: session.value || null, conversation_id: conversation.value || null };
      }
      const out = await Api.plan(manifest);
      showPlan(review, out.plan, out.planning, out.estimate);
    } catch (e) { put(review, h("p", { class: "error", role: "alert" }, "The service refused the plan: " + e.message)); }
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
  return h("div", {}, h("h3", {}, "Planning at " + fmt.num(100 * a.power, 0) + "% power, assumed tie rate " + fmt.num(100 * a.tie_rate, 0) + "%"),
    table(["rule", "radius at Δ=0", "smallest detectable effect", "power at +" + fmt.num(100 * a.effect, 1) + " pts",
      "cases for +" + fmt.num(100 * a.effect, 1) + " pts", "non-inferiority: power / cases"], [row(p.declared, " (makes claims)"), row(p.other, "")], { label: "planning" }),
    sizedView(p),
    table(["tie rate", p.claim_rule + " detects", p.other.rule + " detects"], p.detectable_by_tie_rate.map((t) =>
      h("tr", {}, h("td", {}, fmt.num(100 * t.tie_rate, 0) + "%"), h("td", {}, pts(t[p.claim_rule])), h("td", {}, pts(t[p.other.rule])))), { label: "detectable effect by tie rate" }),
    p.early_stop ? h("p", {}, "Early stopping: dispatch stops once the claim is settled or unreachable (cases interleaved across benchmarks).") : null);
}

// Per-benchmark sizes (stats/sizing.py) of each rule: each weighs its benchmark, none above its pinned source's cases.
function sizedView(p) {
  const rows = [];
  let basis = "";
  for (const r of [p.declared, p.other]) {
    for (const [what, z] of [["+" + fmt.num(100 * r.effect, 1) + " pts", r.sized_for_effect], ["margin " + r.margin, r.sized_for_margin]]) {
      if (!z) continue;
      basis = z.basis;
      const per = Object.entries(z.per_benchmark).map(([b, k]) => b + " " + k + (z.at_available.includes(b) ? "*" : "")).join(", ");
      rows.push(h("tr", {}, h("td", {}, r.rule), h("td", {}, what), h("td", {}, z.reached ? String(z.total) : "not reachable with these sources"),
        h("td", {}, fmt.pct(100 * z.power)), h("td", {}, per)));
    }
  }
  if (!rows.length) return null;
  return h("div", {}, h("p", {}, "Per-benchmark sizes (" + basis + "; each weighs its benchmark, none above the cases its pinned source holds: * = all of them), instead of one common scale:"),
    table(["rule", "for", "cases", "power", "per benchmark"], rows, { label: "per-benchmark sizes" }));
}

function estimateView(est) {
  if (!est) return null;
  return h("div", { class: "estimate" }, h("h3", {}, "Planned requests and an upper cost estimate"),
    h("p", { class: "big" }, est.requests.total + " model requests planned: " + est.requests.subject + " to the targets evaluated + " +
      est.requests.judge + " judge requests; at most " + fmt.usd(est.upper_cost_usd.total) + " (principal at most " +
      fmt.usd(est.upper_cost_usd.subject) + ", judge at most " + fmt.usd(est.upper_cost_usd.judge) + ")."),
    table(["target", "role", "requests", "inference calls (at most)", "upper cost, USD"], est.targets.map((t) => h("tr", {},
      h("th", { scope: "row" }, t.target_id), h("td", {}, t.role), h("td", {}, t.requests + (t.conversation_cells ? " (" + t.conversation_cells + " conversations: more)" : "")),
      h("td", {}, t.inference_calls_upper), h("td", {}, t.priced ? fmt.usd(t.upper_cost_usd) : "unknown: no prices pinned"))), { label: "planned requests" }),
    est.notes.map((n) => h("p", { class: "muted" }, n)), h("p", { class: "muted" }, est.note + ". " + est.basis + "."));
}

function showPlan(box, plan, planning, estimate) {
  const storageKey = "srbench.launch." + plan.plan_sha256;
  const calls = estimate ? estimate.requests.total : plan.total;
  const launch = h("button", { type: "button", on: { click: () => {
    const request = { plan, idempotency_key: "dashboard-" + crypto.randomUUID() };
    sendKept(box, storageKey, Api.launchPath(), request, "launch");
  } } }, "Launch run (" + calls + " model calls planned)");
  put(box, h("h2", {}, "Frozen plan " + plan.plan_sha256.slice(0, 16) + "…"),
    h("p", {}, plan.mode + " · " + plan.profile + " · dataset " + plan.dataset.id + " (" + plan.dataset.case_count + " tasks, " +
      plan.dataset.split + ") · " + plan.total + " cells · cost policy " + plan.cost_policy),
    table(["target", "kind", "model", "effective request parameters"], plan.targets.map((pt) => h("tr", {}, h("td", {}, pt.target.id),
      h("td", {}, pt.target.kind), h("td", {}, pt.target.model), h("td", {}, h("code", {}, JSON.stringify(pt.effective_params))))), { label: "planned targets" }),
    Object.keys(plan.auxiliary_targets || {}).length ? h("p", {}, "Judges (grade answers, not evaluated): " +
      Object.entries(plan.auxiliary_targets).map(([id, pt]) => id + " (" + pt.target.model + ")").join(", ")) : null,
    h("p", {}, "limits: " + Object.entries(plan.limits).map(([k, v]) => k + " " + fmt.auto(v)).join(" · ")),
    (plan.notices || []).length ? h("ul", {}, plan.notices.map((n) => h("li", {}, n))) : null,
    estimateView(estimate),
    planningView(planning),
    h("p", { class: "muted" }, "Nothing has been sent to a model yet. Launching starts paid calls."), launch);
  const kept = sessionStorage.getItem(storageKey);
  if (kept) showKept(box, storageKey, Api.launchPath(), JSON.parse(kept), "A launch of this plan from this tab may not have been answered.", "launch");
}
