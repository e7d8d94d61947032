// sr-bench Dashboard — numbers for reading and records as fields: rounded floats (a float residue such
// as 1.3877787807814457e-17 reads 0), units, digests shortened (the full value in the title), times in
// local time, and any record as labelled fields with its raw JSON behind a toggle.
"use strict";

const UNKNOWN = "unknown";

function rounded(v, digits) {
  const x = Number(v);
  if (!Number.isFinite(x)) return String(v);
  if (Math.abs(x) < 0.5 * 10 ** -digits) return (0).toFixed(digits);
  return x.toFixed(digits);
}

const fmt = {
  num: (v, d = 3) => (v === null || v === undefined ? UNKNOWN : rounded(v, d)),
  signed(v, d = 3) {
    if (v === null || v === undefined) return UNKNOWN;
    const s = rounded(v, d).replace(/^-(0(\.0+)?)$/, "$1");    // no "-0.000"
    return s.startsWith("-") ? s : "+" + s;
  },
  pct: (v, d = 1) => (v === null || v === undefined ? UNKNOWN : rounded(v, d) + "%"),
  usd: (v) => (v === null || v === undefined ? UNKNOWN : "$" + rounded(v, Math.abs(v) >= 1 ? 2 : 5)),
  s: (v, d = 2) => (v === null || v === undefined ? UNKNOWN : rounded(v, d) + " s"),
  // a timestamp as the API sends it — epoch seconds (a number or its text) or ISO 8601 text — in the
  // viewer's local time; text that is neither is shown as it came, never as "Invalid Date"
  time(t) {
    if (!t) return "";
    const d = new Date(typeof t === "number" || /^\s*\d+(\.\d+)?\s*$/.test(t) ? Number(t) * 1000 : Date.parse(t));
    return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
  },
  ci: (c, d = 3) => (c ? "[" + fmt.signed(c[0], d) + ", " + fmt.signed(c[1], d) + "]" : "[unknown]"),
  ci01: (c, d = 3) => (c ? "[" + fmt.num(c[0], d) + ", " + fmt.num(c[1], d) + "]" : "[unknown]"),
  tokens: (t) => (t ? [t.input, t.cached_input, t.cache_write, t.output].map((x) => Number(x).toLocaleString("en")).join(" / ") : UNKNOWN),
  digest: (d) => (typeof d === "string" && d.startsWith("b3:") ? d.slice(0, 15) + "…" : d),
  // any scalar: floats to 4 significant digits and at most 6 decimals (a sub-millisecond latency was
  // 0.0007972, and below 1e-6 JavaScript writes an exponent), integers as they are
  auto(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    return Math.abs(v) < 5e-7 ? "0" : String(Number(Math.abs(v) < 1e-3 ? v.toFixed(6) : v.toPrecision(4)));
  },
};

const TIME_KEYS = /(^|_)(at|ts|time)$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

function scalarNode(key, v) {
  if (TIME_KEYS.test(key) && ((typeof v === "number" && v > 1e9) || (typeof v === "string" && ISO_TIME.test(v)))) {
    return h("span", { title: String(v) }, fmt.time(v));
  }
  if (typeof v === "string" && v.startsWith("b3:") && v.length > 20) return h("code", { title: v }, fmt.digest(v));
  if (typeof v === "string" && v.length > 160) return textBox(v);
  return fmt.auto(v);
}

// A record as a definition list; nested records as nested lists (depth-limited), lists of scalars
// joined, lists of records as one line each. `skip` leaves keys out (shown elsewhere).
function fields(obj, opts, depth = 0) {
  const o = opts || {};
  if (obj === null || obj === undefined) return h("p", { class: "muted" }, "none");
  if (typeof obj !== "object") return h("p", {}, scalarNode("", obj));
  const entries = Array.isArray(obj) ? obj.map((v, i) => [String(i + 1), v]) : Object.entries(obj);
  const items = entries.filter(([k]) => !(o.skip || []).includes(k)).map(([k, v]) => {
    let value;
    if (v && typeof v === "object" && !Array.isArray(v)) {
      value = depth >= 3 ? h("code", {}, JSON.stringify(v)) : Object.keys(v).length ? fields(v, {}, depth + 1) : "—";
    } else if (Array.isArray(v)) {
      value = !v.length ? "none" : v.every((x) => x === null || typeof x !== "object") ? v.map(fmt.auto).join(", ")
        : depth >= 3 ? h("code", {}, JSON.stringify(v)) : fields(v, {}, depth + 1);
    } else value = scalarNode(k, v);
    return h("div", {}, h("dt", {}, (o.labels || {})[k] || k.replace(/_/g, " ")), h("dd", {}, value));
  });
  return items.length ? h("dl", { class: "fields" }, items) : h("p", { class: "muted" }, "none");
}

// The raw JSON of a record behind a toggle, rendered only when opened.
function rawToggle(obj, label) {
  const pre = h("pre", { tabindex: "0", class: "raw" });
  const box = h("details", { class: "raw-json" }, h("summary", {}, label || "Raw JSON"), pre);
  box.addEventListener("toggle", () => { if (box.open && !pre.textContent) pre.textContent = JSON.stringify(obj, null, 2); });
  return box;
}

// A folded section with a heading-like summary.
function section(title, body, open) {
  return h("details", { open: open !== false, class: "section" }, h("summary", {}, title), body);
}

function download(name, type, text) {
  const a = h("a", { href: URL.createObjectURL(new Blob([text], { type })), download: name });
  document.body.append(a); a.click(); a.remove();
}

// Long text (answers, prompts, header values): wrapped, height-capped and so scrollable, which is why
// it is focusable (a keyboard can scroll it).
function textBox(text) { return h("div", { class: "text", tabindex: "0" }, text); }
