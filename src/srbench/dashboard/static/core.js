// sr-bench Dashboard — shared helpers: elements, the HTTP call to /api, routes, polling, tables,
// and requests that start paid work (kept in the tab, re-sent with the same idempotency key).
// Every value is put into the page as text, never as HTML. Polling is read-only, resumes by itself
// after a network loss and stops when a page says so (a terminal run); one poll runs at a time:
// opening another page ends the previous page's poll. Nothing here starts or changes a run by itself.
// The API's shapes are read in data.js only.
"use strict";

const POLL_MS = 3000;
const TERMINAL = ["completed", "failed", "cancelled", "interrupted", "stopped_early"];
let timer = null;
let pollGeneration = 0;

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
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), q: new URLSearchParams(query || "") };
}

function hrefOf(parts, q) {
  const qs = q && q.toString();
  return "#/" + parts.map(encodeURIComponent).join("/") + (qs ? "?" + qs : "");
}

function go(parts, q) { location.hash = hrefOf(parts, q); }

// The URL of the page without a new render (tabs, filters that re-render in place).
function replaceUrl(parts, q) { history.replaceState(null, "", hrefOf(parts, q)); }

// Polls `fn` every POLL_MS until it returns false or another page starts its own poll.
function poll(fn) {
  const mine = ++pollGeneration;
  clearTimeout(timer);
  const tick = async () => {
    if (mine !== pollGeneration) return;
    let more = true;
    try { more = (await fn()) !== false; } catch (e) { /* shown by api(); the next tick retries */ }
    if (more && mine === pollGeneration) timer = setTimeout(tick, POLL_MS);
  };
  tick();
  return () => mine === pollGeneration;        // "is this page's poll still the current one?"
}

// A page without a poll ends the previous page's; the answer says whether this page is still the one
// shown (a slower page opened earlier never draws over a newer one).
function stopPolling() {
  const mine = ++pollGeneration;
  clearTimeout(timer);
  return () => mine === pollGeneration;
}

function put(el, ...nodes) {
  el.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined));
}

function show(...nodes) {
  const view = document.getElementById("view");
  put(view, ...nodes);
  return view;
}

function link(parts, q, text, attrs) { return h("a", Object.assign({ href: hrefOf(parts, q) }, attrs || {}), text); }

// "first–last of total" and the previous/next buttons that move `offset` in the route's query.
function pager(parts, q, offset, size, shown, total, noun, onMove) {
  const move = (to) => () => {
    q.set("offset", to);
    if (onMove) { replaceUrl(parts, q); onMove(to); } else go(parts, q);
  };
  return h("div", { class: "pager" },
    h("p", { class: "muted", "aria-live": "polite" }, (total ? offset + 1 : 0) + "–" + (offset + shown) + " of " + total + (noun ? " " + noun : "")),
    h("button", { type: "button", disabled: offset <= 0, on: { click: move(Math.max(0, offset - size)) } }, "← previous " + size),
    h("button", { type: "button", disabled: offset + size >= total, on: { click: move(offset + size) } }, "next " + size + " →"));
}

// A table in a horizontal scroll container (the page itself never grows wider than the screen).
// An empty table is a sentence instead (a header row without data cells is no table).
function table(head, rows, opts) {
  const o = opts || {};
  if (!rows.length) return h("p", { class: "muted" }, o.empty || "nothing to show");
  const t = h("table", {}, o.caption ? h("caption", {}, o.caption) : null,
    h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))), h("tbody", {}, rows));
  return h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": o.label || o.caption || head.join(", ") }, t);
}

// A request that starts paid work: kept in the tab (sessionStorage) before it is sent; an answer
// that never arrived is re-sent with the same idempotency key, which binds the same run.
async function sendKept(box, storageKey, path, request, what) {
  sessionStorage.setItem(storageKey, JSON.stringify(request));     // kept before anything is sent
  try {
    const out = await api(path, { method: "POST", body: JSON.stringify(request) });
    sessionStorage.removeItem(storageKey);
    go(["run", Api.createdRunId(out)]);
  } catch (e) {
    if (e.status && e.status < 500) {          // answered and refused: re-sending would not change that
      sessionStorage.removeItem(storageKey);
      put(box, h("p", { class: "error", role: "alert" }, "The service refused the " + what + ": " + e.message));
    } else {
      showKept(box, storageKey, path, request, "The " + what + " request got no clear answer: " + e.message, what);
    }
  }
}

function showKept(box, storageKey, path, request, why, what) {
  put(box, h("p", { class: "error", role: "alert" }, why), h("p", {}, "Re-sending repeats the same request with the idempotency key " +
      request.idempotency_key + ": it binds the same run, never a second one."),
    h("button", { type: "button", on: { click: () => sendKept(box, storageKey, path, request, what) } }, "Re-send the same request"),
    h("button", { type: "button", on: { click: () => { sessionStorage.removeItem(storageKey); put(box); } } }, "Forget it"));
}

// Sign out: a POST with the Dashboard's header (the Dashboard refuses a sign-out without it, so a page
// elsewhere cannot sign this browser out), then the sign-in page.
document.querySelectorAll("form[action='/logout']").forEach((form) => form.addEventListener("submit", (e) => {
  e.preventDefault();
  fetch("/logout", { method: "POST", credentials: "same-origin", headers: { "X-SR-Bench-Dashboard": "1" } })
    .finally(() => { location.href = "/login"; });
}));
