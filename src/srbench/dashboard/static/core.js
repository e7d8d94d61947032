// sr-bench Dashboard — shared helpers: elements, the API (through /api), routes, polling,
// and requests that start paid work (kept in the tab, re-sent with the same idempotency key).
// Every value is put into the page as text, never as HTML. Polling is read-only and resumes by
// itself after a network loss; nothing here starts, restarts or changes a run by itself.
"use strict";

const POLL_MS = 3000;
const TERMINAL = ["completed", "failed", "cancelled", "interrupted", "stopped_early"];
let timer = null;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "on") { for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn); }
    else if (v !== null && v !== undefined && v !== false) el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const fmt = {
  num: (v, d = 3) => (v === null || v === undefined ? "unknown" : Number(v).toFixed(d)),
  pct: (v) => (v === null || v === undefined ? "unknown" : Number(v).toFixed(1) + "%"),
  usd: (v) => (v === null || v === undefined ? "unknown" : Number(v).toFixed(5)),
  time: (t) => (t ? new Date(t * 1000).toLocaleString() : ""),
  ci: (c) => (c ? "[" + fmt.num(c[0]) + ", " + fmt.num(c[1]) + "]" : "unknown"),
  tokens: (t) => (t ? [t.input, t.cached_input, t.cache_write, t.output].join("/") : "unknown"),
};

async function api(path, options) {
  const init = Object.assign({ credentials: "same-origin" }, options || {});
  const method = init.method || "GET";
  if (init.method === "POST") {
    init.headers = { "Content-Type": "application/json", "X-SR-Bench-Dashboard": "1" };
    if (init.body) init.body = JSON.stringify(wire.toWire(method, path, JSON.parse(init.body)));
  }
  let resp;
  try {
    resp = await fetch("/api" + path, init);
  } catch (e) {
    connection(false);
    throw new Error("the Dashboard cannot be reached (retrying)");
  }
  connection(true);
  if (resp.status === 401) { location.href = "/login"; throw new Error("signed out"); }
  const data = await resp.json().catch(() => null);
  if (!resp.ok) {
    const err = new Error(wire.message(data) || "HTTP " + resp.status);
    err.status = resp.status;
    throw err;
  }
  return wire.fromWire(method, path, data);
}

function connection(ok) {
  const el = document.getElementById("conn");
  el.textContent = ok ? "updated " + new Date().toLocaleTimeString() : "connection lost — retrying";
  el.className = ok ? "conn" : "conn lost";
}

function route() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  return { parts: path.split("/").filter(Boolean), q: new URLSearchParams(query || "") };
}

function go(parts, q) {
  const qs = q && q.toString();
  location.hash = "#/" + parts.map(encodeURIComponent).join("/") + (qs ? "?" + qs : "");
}

function poll(fn) {
  clearTimeout(timer);
  const tick = async () => {
    try { await fn(); } catch (e) { /* shown by api(); the next tick retries */ }
    timer = setTimeout(tick, POLL_MS);
  };
  tick();
}

function put(el, ...nodes) {
  el.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined));
}

function show(...nodes) {
  const view = document.getElementById("view");
  put(view, ...nodes);
  return view;
}

// "first–last of total" and the previous/next buttons that move `offset` in the route's query.
function pager(parts, q, offset, size, shown, total, noun) {
  const move = (to) => () => { q.set("offset", to); go(parts, q); };
  return [h("p", { class: "muted" }, (total ? offset + 1 : 0) + "–" + (offset + shown) + " of " + total + (noun ? " " + noun : "")),
    h("button", { disabled: offset <= 0, on: { click: move(Math.max(0, offset - size)) } }, "← previous " + size),
    h("button", { disabled: offset + size >= total, on: { click: move(offset + size) } }, "next " + size + " →")];
}

// Every event of a run, oldest first (the service pages them by 100 after a sequence number).
async function allEvents(id) {
  const all = [];
  for (let after = 0; ;) {
    const page = (await api("/runs/" + encodeURIComponent(id) + "/events?after=" + after)).events;
    all.push(...page);
    if (page.length < 100) return all;
    after = page[page.length - 1].seq;
  }
}

function table(head, rows) {
  return h("table", {}, h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))), h("tbody", {}, rows));
}

// A request that starts paid work: kept in the tab (sessionStorage) before it is sent; an answer
// that never arrived is re-sent with the same idempotency key, which binds the same run.
async function sendKept(box, storageKey, path, request, what) {
  sessionStorage.setItem(storageKey, JSON.stringify(request));     // kept before anything is sent
  try {
    const out = await api(path, { method: "POST", body: JSON.stringify(request) });
    sessionStorage.removeItem(storageKey);
    go(["run", out.run.id]);
  } catch (e) {
    if (e.status && e.status < 500) {          // answered and refused: re-sending would not change that
      sessionStorage.removeItem(storageKey);
      put(box, h("p", { class: "error" }, "The service refused the " + what + ": " + e.message));
    } else {
      showKept(box, storageKey, path, request, "The " + what + " request got no clear answer: " + e.message, what);
    }
  }
}

function showKept(box, storageKey, path, request, why, what) {
  put(box, h("p", { class: "error" }, why), h("p", {}, "Re-sending repeats the same request with the idempotency key " +
      request.idempotency_key + ": it binds the same run, never a second one."),
    h("button", { on: { click: () => sendKept(box, storageKey, path, request, what) } }, "Re-send the same request"),
    h("button", { on: { click: () => { sessionStorage.removeItem(storageKey); put(box); } } }, "Forget it"));
}
