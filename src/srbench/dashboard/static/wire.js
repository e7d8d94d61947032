// sr-bench Dashboard — the one accessor layer between the service's wire format (upstream's sr-bench
// API: bare runs and reports, {error, code}, ISO times, events {seq, at, kind, data}, manifests with
// plain targets) and the shapes the pages read. `api()` (core.js) passes every request body through
// toWire and every answer through fromWire; pages can move to the wire shapes one by one and this
// layer shrinks with them.
"use strict";

const wire = (() => {
  const epoch = (t) => (typeof t === "string" ? Date.parse(t) / 1000 : t);
  const TIMES = ["created_at", "started_at", "finished_at", "updated_at"];

  function run(r) {
    if (!r || typeof r !== "object") return r;
    const out = Object.assign({}, r);
    for (const k of TIMES) if (k in out) out[k] = epoch(out[k]);
    return out;
  }

  // A wire manifest (targets plain, effective parameters in target_profiles) as the frozen plan the
  // pages show: targets as {target, effective_params, registered}. The service takes either form back.
  function plan(m) {
    if (!m || !Array.isArray(m.target_profiles)) return m;
    const prof = Object.fromEntries(m.target_profiles.map((p) => [p.id, p]));
    const out = Object.assign({}, m, {
      targets: m.targets.map((t) => ({ target: t, effective_params: (prof[t.id] || {}).effective_params,
        registered: (prof[t.id] || {}).registered })),
      auxiliary_targets: Object.fromEntries(Object.entries(m.auxiliary_targets || {}).map(([id, t]) =>
        [id, Object.assign({ target: t }, (m.auxiliary_profiles || {})[id] || {})])),
    });
    delete out.target_profiles;
    delete out.auxiliary_profiles;
    return out;
  }

  function toWire(method, path, body) {
    if (method === "POST" && path === "/runs" && body && "plan" in body && !("manifest" in body)) {
      const out = Object.assign({}, body, { manifest: body.plan });
      delete out.plan;
      return out;
    }
    return body;
  }

  function fromWire(method, path, data) {
    const p = path.split("?")[0];
    if (!data || typeof data !== "object") return data;
    if (method === "POST" && (p === "/runs" || /\/recover$/.test(p) || p === "/replays")) {
      return { run: run(data), created: data.created };
    }
    if (p === "/plans" || /\/candidate-plan$/.test(p)) return Object.assign({}, data, { plan: plan(data.manifest) });
    if (/^\/runs\/[^/]+\/report$/.test(p)) {
      return { report: Object.assign({}, data, { report: data.report_digest }), cache_hit: data.cache_hit,
        explain: data.explain };
    }
    if (p === "/comparisons") return { comparison: data, digest: data.comparison_digest, cache_hit: data.cache_hit };
    if (/^\/runs\/[^/]+\/events$/.test(p)) {
      return Object.assign({}, data, { events: data.events.map((e) => Object.assign({}, e, { ts: epoch(e.at), type: e.kind })) });
    }
    if (p === "/runs") return Object.assign({}, data, { runs: data.runs.map(run) });
    if (/^\/runs\/[^/]+(\/cancel)?$/.test(p)) return run(data);
    if (/^\/datasets\/[^/]+$/.test(p) && data.manifest) return data.manifest;
    return data;
  }

  // The service's error body is {error: message, code}; the pages read error.message.
  function message(data) {
    if (!data) return null;
    return typeof data.error === "string" ? data.error : (data.error && data.error.message) || null;
  }

  return { toWire, fromWire, message };
})();
