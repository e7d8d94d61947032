// sr-bench Dashboard — Recipes (UI-7): the router configuration the service captured for a run from
// the router's own API (hash → config + ETag → recipes → hash, secrets and connection details
// redacted), its check after the run, a download, and the difference between two runs' captures.
// The Dashboard only shows what the service stored; a run without a capture says "unavailable".
"use strict";

async function recipeView(box, id) {
  const recipes = await Api.recipes(id);
  if (!recipes.length) {
    put(box, h("p", {}, "Recipe: unavailable. This run has no router (MoM) target, so there is no router configuration to capture."));
    return;
  }
  put(box, recipes.map(recipeBlock));
}

function recipeBlock(r) {
  const cap = r.capture;
  const title = h("h2", {}, "Recipe of " + r.target_id + " — " + (r.status === "captured" ? "captured" : r.status === "unavailable" ? "unavailable" : "not captured"));
  if (!cap || r.status !== "captured") {
    return h("section", { class: "recipe" }, title, h("p", { class: r.status === "unavailable" ? "" : "error" },
      (r.status === "unavailable" ? "Recipe: unavailable — " : "") + r.limitation + ". A run never borrows a capture taken later; " +
      "live calls confirm the config hash independently (Evidence tab)."),
    cap ? section("What the router's config API answered", fields({ hash_before: cap.hash_before, hash_after: cap.hash_after,
      config_etag: cap.config_etag, recipes_etag: cap.recipes_etag }), false) : null);
  }
  const after = r.after || {};
  const exported = { target_id: r.target_id, captured_at: cap.captured_at, projection_hash: cap.projection_hash,
    config_hash: cap.hash_before && cap.hash_before.hash, config: cap.config, recipes: cap.recipes };
  return h("section", { class: "recipe" }, title,
    fields({ captured_at: cap.captured_at, projection_hash: cap.projection_hash, pinned_config_hash: cap.pinned_config_hash,
      router_hash: cap.hash_before.hash, runtime_hash: cap.hash_before.runtime_hash, active_hash: cap.hash_before.active_hash,
      status: cap.hash_before.status, config_etag: cap.config_etag,
      after_the_run: r.held_during_run === true ? "unchanged (hash and ETag)" : r.held_during_run === false ? after.problem : "not checked (the run was stopped)" }),
    r.limitation ? h("p", { class: "error" }, r.limitation) : null,
    table(["recipe", "description", "routing", "entry points", "source"], (cap.recipes || []).map((x) => h("tr", {},
      h("th", { scope: "row" }, x.name || "?"), h("td", {}, x.description || ""), h("td", {}, eventSummary(x.routing || {})),
      h("td", {}, (x.entrypoints || []).join(", ")), h("td", {}, x.source || ""))), { empty: "The router lists no recipe.", label: "recipes" }),
    section("Router configuration (redacted: " + cap.redacted.length + " credential or connection field(s))", fields(cap.config), false),
    h("p", {}, h("button", { type: "button", on: { click: () => download("recipe-" + r.target_id + ".json", "application/json",
      JSON.stringify(exported, null, 2)) } }, "Download recipe (JSON, redacted)")),
    rawToggle(cap, "Raw JSON of the capture"));
}

// Every leaf of a capture's config and recipes as path → value (recipes keyed by name).
function flatten(value, path, out) {
  if (value && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [v && typeof v === "object" && v.name ? v.name : String(i), v]) : Object.entries(value);
    if (!entries.length) out.set(path, Array.isArray(value) ? "[]" : "{}");
    for (const [k, v] of entries) flatten(v, path ? path + "." + k : k, out);
  } else out.set(path, JSON.stringify(value));
  return out;
}

// The difference between two captures: [{path, before, after}] (a missing side is null).
function recipeDiff(a, b) {
  const fa = flatten({ config: a.config, recipes: a.recipes }, "", new Map());
  const fb = flatten({ config: b.config, recipes: b.recipes }, "", new Map());
  const out = [];
  for (const p of [...new Set([...fa.keys(), ...fb.keys()])].sort()) {
    if (fa.get(p) !== fb.get(p)) out.push({ path: p, before: fa.get(p) ?? null, after: fb.get(p) ?? null });
  }
  return out;
}

// Compare iterations: each chosen run's router recipe against the previous run's (creation order).
async function recipeDiffView(runIds, names) {
  const got = await Promise.all(runIds.map((id) => Api.recipes(id).catch(() => [])));
  const blocks = [];
  for (let i = 1; i < runIds.length; i++) {
    const before = got[i - 1].filter((r) => r.status === "captured"), after = got[i].filter((r) => r.status === "captured");
    const title = names[runIds[i - 1]] + " → " + names[runIds[i]];
    if (!before.length || !after.length) {
      blocks.push(h("p", { class: "muted" }, title + ": no captured recipe on " + (!before.length ? "the first" : "the second") + " run, nothing to diff."));
      continue;
    }
    for (const b of after) {
      const a = before.find((x) => x.target_id === b.target_id) || (before.length === 1 && after.length === 1 ? before[0] : null);
      if (!a) { blocks.push(h("p", { class: "muted" }, title + ": router " + b.target_id + " has no capture in the earlier run.")); continue; }
      const diff = recipeDiff(a.capture, b.capture);
      blocks.push(h("div", {}, h("h3", {}, title + " (" + a.target_id + (a.target_id !== b.target_id ? " → " + b.target_id : "") + ")"),
        h("p", {}, a.capture.projection_hash === b.capture.projection_hash ? "The same recipe (projection hash " + fmt.digest(a.capture.projection_hash) + ")."
          : diff.length + " field(s) differ."),
        diff.length ? table(["field", "before", "after"], diff.map((d) => h("tr", {}, h("td", {}, h("code", {}, d.path)),
          h("td", {}, d.before ?? "(absent)"), h("td", {}, d.after ?? "(absent)"))), { label: "recipe differences" }) : null));
    }
  }
  return blocks.length ? h("section", {}, h("h2", {}, "Recipe changes between iterations"), blocks) : null;
}
