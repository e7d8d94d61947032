// sr-bench Dashboard — readable evidence: one call as labelled fields (answer, request, timings,
// usage, routing headers; a conversation's calls one by one), and the Evidence tab (provenance,
// corrections, budget, lineage, config-hash checks, recipe captures). Raw JSON is behind a toggle.
"use strict";

function callView(full) {
  const rec = full.record || {};
  const req = full.request_object || {};
  const summary = {
    state: full.state, status: full.status ?? rec.status, error_class: full.error_class, error: full.error,
    http_status: full.http_status, finish_reason: full.finish_reason ?? rec.finish_reason,
    response_model: full.response_model ?? rec.response_model, selected_model: full.selected_model,
    latency_s: full.latency_s, ttft_s: full.ttft_s, tokens_in_cached_write_out: full.usage ? fmt.tokens(full.usage) : null,
    damaged: full.damaged ? full.damage : null,
  };
  for (const k of Object.keys(summary)) if (summary[k] === null || summary[k] === undefined) delete summary[k];   // only what is known
  const headers = Object.entries(rec.headers || {});
  const messages = (req.body || {}).messages || [];
  const params = Object.fromEntries(Object.entries(req.body || {}).filter(([k]) => !["messages", "stream", "stream_options"].includes(k)));
  const turns = rec.calls || rec.turns || null;         // a conversation record (multi-call cell)
  return h("div", { class: "call" },
    h("h3", {}, "Call " + full.cell_id), fields(summary, { labels: { latency_s: "latency, s", ttft_s: "time to first token, s" } }),
    h("h4", {}, "Answer"), textBox(rec.text ?? rec.final_text ?? "(no visible answer)"),
    turns ? h("div", {}, h("h4", {}, "Conversation: " + turns.length + " calls"), table(["#", "role", "target", "status", "model (a router's choice)", "cost, USD"],
      turns.map((t, i) => h("tr", {}, h("td", {}, (t.index ?? i) + 1), h("td", {}, t.role || ""), h("td", {}, t.target_id || ""),
        h("td", {}, (t.status || "") + (t.error_class ? " · " + t.error_class : "")), h("td", {}, t.selected_model || t.response_model || "—"),
        h("td", {}, fmt.usd(t.cost_usd)))), { label: "conversation calls" })) : null,
    full.trajectory_object ? trajectoryView(full.trajectory_object) : null,
    messages.length ? section("Request: " + messages.length + " message(s) to " + (req.url || "?"),
      h("div", {}, messages.map((m) => h("div", { class: "message" }, h("strong", {}, m.role + ": "),
        textBox(typeof m.content === "string" ? m.content : JSON.stringify(m.content)))),
      h("h4", {}, "Request parameters"), fields(params)), false) : null,
    headers.length ? section("Response headers (" + headers.length + ", credentials masked)", table(["header", "value"],
      headers.map(([k, v]) => h("tr", {}, h("td", {}, h("code", {}, k)), h("td", { class: "wrap" }, String(v)))), { label: "headers" }), false) : null,
    section("Timings", fields(rec.timings || null), false),
    rawToggle(full, "Raw JSON of the call"));
}

// Evidence: what the figures rest on — provenance, corrections, budget, lineage, config-hash checks.
async function evidenceView(box, id) {
  const [run, rep, events] = await Promise.all([Api.run(id), Api.report(id), Api.events(id)]);
  const checks = events.filter((e) => e.kind === "config_hash_checked");
  const stops = events.filter((e) => ["dispatch_stopped", "budget_refused", "storage_fault", "object_damaged"].includes(e.kind));
  const captures = events.filter((e) => e.kind === "recipe_captured" || e.kind === "recipe_checked");
  const lineage = [run.parent ? h("p", {}, "Recovery child of ", link(["run", run.parent], null, run.parent),
    " (the parent's known cost " + fmt.usd(run.parent_known_cost_usd) + " is kept apart)") : h("p", {}, "No parent: this run is not a recovery."),
  run.children.length ? h("p", {}, "Recovery children: ", run.children.map((c, i) => [i ? ", " : "", link(["run", c], null, c)])) : h("p", {}, "No recovery child.")];
  put(box, section("Provenance (plan, dataset, graders, hashes)", h("div", {}, fields(rep.provenance), rawToggle(rep.provenance)), false),
    section("Usage correction (reconcile-usage)", rep.accounting_correction ? fields(rep.accounting_correction) : h("p", {}, "none")),
    section("Price correction (reprice)", rep.price_correction ? fields(rep.price_correction) : h("p", {}, "none")),
    section("Budget (a reservation and actual-cost stop, not a provider cap)", run.budget ? fields(run.budget) : h("p", {}, "no budget")),
    section("Lineage", h("div", {}, lineage)),
    section("Config-hash checks (" + checks.length + ")", table(["time", "phase", "target", "pinned", "seen", "evidence", "probe"],
      checks.map((e) => h("tr", {}, h("td", {}, fmt.time(e.at)), h("td", {}, e.data.phase), h("td", {}, e.data.target_id),
        h("td", {}, e.data.expected || ""), h("td", {}, e.data.seen || "none"), h("td", {}, e.data.evidence || ""), h("td", {}, e.data.probe || ""))),
    { empty: "No router with a pinned config_hash in this run.", label: "config-hash checks" })),
    section("Recipe captures (" + captures.length + ")", table(["time", "kind", "target", "what"], captures.map((e) => h("tr", {},
      h("td", {}, fmt.time(e.at)), h("td", {}, e.kind), h("td", {}, e.data.target_id),
      h("td", {}, e.data.limitation || e.data.problem || (e.kind === "recipe_captured" ? "captured, projection " + fmt.digest(e.data.projection_hash) : "unchanged after the run")))),
    { empty: "No recipe was captured for this run.", label: "recipe captures" }), false),
    section("Dispatch stops, budget refusals, storage faults (" + stops.length + ")", table(["time", "kind", "what"],
      stops.map((e) => h("tr", {}, h("td", {}, fmt.time(e.at)), h("td", {}, e.kind), h("td", {}, eventSummary(e.data)))),
    { empty: "None.", label: "dispatch stops" })));
}

// An agent's stored trajectory: its outcome, the commands it ran, then every message in order.
function trajectoryView(t) {
  const steps = t.steps || [];
  const messages = t.messages || [];
  return section("Agent trajectory: " + messages.length + " messages" + (steps.length ? ", " + steps.length + " commands" : ""),
    h("div", {}, fields({ reward: t.reward, stop_reason: t.stop_reason, turns: t.turns, error_class: t.error_class, error: t.error }),
      steps.length ? table(["turn", "command", "problem"], steps.map((x) => h("tr", {}, h("td", {}, x.turn ?? ""),
        h("td", {}, h("code", {}, x.command || "")), h("td", {}, x.error || ""))), { label: "agent commands" }) : null,
      messages.map((m, i) => h("div", { class: "message" }, h("strong", {}, (i + 1) + ". " + (m.role || "?") + ": "),
        textBox(typeof m.content === "string" ? m.content : JSON.stringify(m.content)),
        m.tool_calls ? h("p", { class: "muted" }, "tool calls: " + m.tool_calls.map((c) => (c.function || {}).name + "(" + (c.function || {}).arguments + ")").join("; ")) : null)),
      rawToggle(t, "Raw JSON of the trajectory")), false);
}
