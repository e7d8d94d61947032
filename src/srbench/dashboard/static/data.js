// sr-bench Dashboard — the one module that knows the service API's shapes. Every page reads and
// writes through `Api`; the pages see plain values in one internal shape:
//   run     {id, name, mode, profile, status, progress{total, completed, failed, ambiguous, running,
//            pending}, targets[{id, kind, model}], created_at, updated_at, error, parent, children,
//            budget, early_stop, raw}
//   event   {seq, at, kind, data}
//   page    {items, total, offset}
// When the API changes shape (cursors, field names, event fields, experiments), this file changes and
// nothing else does. Reads are GETs through the Dashboard's allowlist; writes are model-free
// (comparisons, plans, combine, recovery review) or explicit launches after a review.
"use strict";

const enc = encodeURIComponent;
const PAGE = 100;

function runOf(r) {
  const lineage = r.lineage || {};
  return {   // the wire says upstream's `completed` for a run stopped early by its plan's rule, `stopped_early` beside it
    id: r.id ?? r.run_id, name: r.name, mode: r.mode, profile: r.profile, status: r.stopped_early ? "stopped_early" : r.status,
    progress: r.progress || {}, targets: r.target_info || r.targets_info || [], created_at: r.created_at,
    updated_at: r.updated_at, error: r.error, parent: lineage.parent ?? r.parent ?? null,
    children: lineage.children || [], parent_known_cost_usd: lineage.parent_known_cost_usd,
    budget: r.budget ?? null, early_stop: r.early_stop ?? null, plan: r.plan, plan_sha256: r.plan_sha256,
    experiment_roles: r.experiment_roles || [], raw: r,
  };
}

function eventOf(e) {
  return { seq: e.seq, at: e.at ?? e.ts, kind: e.kind ?? e.type, data: e.data || {} };
}

// A page of a run's results or calls. `offset` paging today; a cursor API changes only this.
async function pageOf(path, key, offset, limit) {
  const data = await api(path + (path.includes("?") ? "&" : "?") + "offset=" + offset + "&limit=" + limit);
  const items = data[key] || data.items || data.data || [];
  return { items, total: data.total ?? items.length, offset: data.offset ?? offset };
}

const epochOf = (t) => (typeof t === "string" ? Date.parse(t) / 1000 : t);
const experimentOf = (e) => Object.assign({}, e, { created_at: epochOf(e.created_at), updated_at: epochOf(e.updated_at) });

const Api = {
  runs: async () => (await api("/runs")).runs.map(runOf),
  run: async (id) => runOf(await api("/runs/" + enc(id))),
  report: async (id) => (await api("/runs/" + enc(id) + "/report")).report,
  // a running run's figures so far, maintained as its cells finish (cheap at any size)
  live: (id) => api("/runs/" + enc(id) + "/live"),
  results: (id, offset, limit = PAGE) => pageOf("/runs/" + enc(id) + "/results", "results", offset, limit),
  calls: (id, offset, limit = PAGE) => pageOf("/runs/" + enc(id) + "/calls", "calls", offset, limit),
  // one call by its id (a call summary's `id`; a cell id names the cell's subject call)
  call: (id, callId) => api("/runs/" + enc(id) + "/calls/" + enc(callId)),
  callKey: (c) => c.id ?? c.cell_id,
  recipes: async (id) => (await api("/runs/" + enc(id) + "/recipes")).recipes,
  // Every event of a run, oldest first (the service pages them by 100 after a sequence number).
  async events(id) {
    const all = [];
    for (let after = 0; ;) {
      const data = await api("/runs/" + enc(id) + "/events?after=" + after);
      const page = data.events.map(eventOf);
      all.push(...page);
      if (!page.length || ("next_cursor" in data ? !data.next_cursor : page.length < 100)) return all;
      after = page[page.length - 1].seq;
    }
  },
  async experiments() {
    const out = [];
    for (let after = 0; ;) {
      const page = await api("/experiments?limit=50&after=" + after);
      out.push(...page.experiments.map(experimentOf));
      if (!page.has_more || page.next_cursor === null || page.next_cursor === undefined) return out;
      after = page.next_cursor;
    }
  },
  // an experiment and every run that joined it: {experiment, members: [{run_id, role, hypothesis, linked_at}]}
  async experimentRuns(id) {
    const members = [];
    let experiment = null;
    for (let after = 0; ;) {
      const page = await api("/experiments/" + enc(id) + "/runs?limit=50&after=" + after);
      experiment = experimentOf(page.experiment);
      members.push(...page.members.map((m) => Object.assign({}, m, { linked_at: epochOf(m.linked_at) })));
      if (!page.has_more || page.next_cursor === null || page.next_cursor === undefined) return { experiment, members };
      after = page.next_cursor;
    }
  },
  targets: async () => (await api("/targets")).targets,
  setup: async () => (await api("/setup")).benchmarks,
  async datasets() {
    const out = [];
    for (let offset = 0; ; offset += 100) {
      const page = await api("/datasets?limit=100&offset=" + offset);
      out.push(...page.datasets);
      if (!page.datasets.length || out.length >= page.total) return out;
    }
  },
  dataset: (id) => api("/datasets/" + enc(id)),
  async cases(id, offset, limit, filters) {
    const params = new URLSearchParams({ offset, limit });
    for (const [k, v] of Object.entries(filters || {})) if (v) params.set(k, v);
    const data = await api("/datasets/" + enc(id) + "/cases?" + params);
    return { items: data.cases, total: data.total, offset: data.offset };
  },
  // which runs can be this run's baseline, and why the others cannot (the service decides: GET …/baselines)
  baselines: (id) => api("/runs/" + enc(id) + "/baselines"),
  // the routing diagnosis of a run's routers against a baseline run's singles (stored; no model call)
  diagnose: (id, baseline) => api("/runs/" + enc(id) + "/diagnose?baseline=" + enc(baseline)),
  compare: async (baseline, candidate) => (await api("/comparisons", { method: "POST",
    body: JSON.stringify({ baseline_run_id: baseline, candidate_run_id: candidate }) })).comparison,
  async plan(manifest) {
    const out = await api("/plans", { method: "POST", body: JSON.stringify({ manifest }) });
    return { plan: out.plan, planning: out.planning, estimate: out.estimate };
  },
  combine: (manifests) => api("/datasets/combine", { method: "POST", body: JSON.stringify({ manifests }) }),
  // whole benchmark groups of prepared datasets as one frozen dataset (upstream's compose; no model call)
  compose: async (datasetIds, benchmarks) => (await api("/datasets/compose", { method: "POST",
    body: JSON.stringify({ dataset_ids: datasetIds, benchmarks }) })).dataset,
  recoverPlan: (id, mode) => api("/runs/" + enc(id) + "/recover-plan", { method: "POST", body: JSON.stringify({ mode }) }),
  // paths of the requests that start paid work (sent by sendKept, which keeps them in the tab)
  launchPath: () => "/runs",
  recoverPath: (id) => "/runs/" + enc(id) + "/recover",
  createdRunId: (out) => (out.run ? out.run.id ?? out.run.run_id : out.id),
};

// Fields of a report's per-target summary, whatever the report version calls them.
const Costs = {
  principal: (t) => t.cost_usd ?? t.principal_cost_usd ?? null,
  // every auxiliary role the report meters (judge, user simulator, scaffolding), each apart; the judge only
  // when the run's plan has one (`report.judges`, the service's answer): a benchmark without a judge has no
  // judge cost at all, which is "—", never "$0.00000"
  roles(t, rep) {
    const out = [];
    for (const [key, label] of [["judge_cost_usd", "judge"], ["simulator_cost_usd", "user simulator"],
      ["scaffolding_cost_usd", "scaffolding"]]) if (key in t && (key !== "judge_cost_usd" || Costs.judged(rep))) out.push({ role: label, usd: t[key] });
    return out;
  },
  judged: (rep) => !rep || !Array.isArray(rep.judges) || rep.judges.length > 0,
  total: (t) => t.total_cost_usd ?? null,
};
