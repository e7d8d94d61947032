// sr-bench Dashboard — charts in plain SVG (no library): axis titles, "nice" ticks that include zero,
// a legend, labels placed so they never overlap (a label with no free place is left out: the point's
// tooltip and the table beside the chart carry it), one colour per run. Every chart draws the same
// data as the table next to it; unknown values are not drawn and the chart says how many.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const PALETTE = ["#1f5fa8", "#b5471b", "#2e7d32", "#7b3fa0", "#8a6d00", "#00707a", "#a3195b", "#4a4a4a"];
const SHAPES = ["circle", "square", "triangle", "diamond"];

function svgEl(tag, attrs, text) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// Ticks at 1, 2 or 5 × 10^k covering [lo, hi]; zero is one of them whenever the range spans it.
function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  const first = Math.floor(lo / step + 1e-9), last = Math.ceil(hi / step - 1e-9);
  for (let k = first; k <= last; k++) ticks.push(k === 0 ? 0 : k * step);
  return { ticks, step, lo: ticks[0], hi: ticks[ticks.length - 1] };
}

function tickText(v, step) {
  const d = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return v.toFixed(Math.min(d, 6));
}

function marker(shape, x, y, colour, title) {
  const r = 5;
  let el;
  if (shape === "square") el = svgEl("rect", { x: x - r, y: y - r, width: 2 * r, height: 2 * r });
  else if (shape === "triangle") el = svgEl("polygon", { points: `${x},${y - r - 1} ${x - r - 1},${y + r} ${x + r + 1},${y + r}` });
  else if (shape === "diamond") el = svgEl("polygon", { points: `${x},${y - r - 1} ${x + r + 1},${y} ${x},${y + r + 1} ${x - r - 1},${y}` });
  else el = svgEl("circle", { cx: x, cy: y, r });
  el.setAttribute("fill", colour);
  el.setAttribute("class", "mark");
  el.append(svgEl("title", {}, title));
  return el;
}

// Greedy label placement: the first of a few spots beside the point that overlaps no placed label,
// no point and stays inside the plot; none free → no label.
function placeLabels(svg, items, box) {
  const placed = [];
  const points = items.map((p) => ({ x0: p.x - 6, x1: p.x + 6, y0: p.y - 6, y1: p.y + 6 }));
  const hit = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  for (const p of items) {
    if (!p.label) continue;
    const w = 6.4 * p.label.length, hgt = 12;
    const spots = [[8, -4], [8, 12], [-8 - w, -4], [-8 - w, 12], [-w / 2, -10], [-w / 2, 20]];
    for (const [dx, dy] of spots) {
      const r = { x0: p.x + dx, x1: p.x + dx + w, y0: p.y + dy - hgt + 2, y1: p.y + dy + 2 };
      if (r.x0 < box.x0 || r.x1 > box.x1 || r.y0 < box.y0 || r.y1 > box.y1) continue;
      if (placed.some((q) => hit(q, r)) || points.some((q) => hit(q, r))) continue;
      placed.push(r);
      svg.append(svgEl("text", { x: r.x0, y: p.y + dy, class: "point-label" }, p.label));
      break;
    }
  }
}

function axes(svg, g, xs, ys, xTitle, yTitle, xFmt) {
  const { L, R, T, B, W, H } = g;
  svg.append(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }),
    svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  for (const v of ys.ticks) {
    const y = g.Y(v);
    svg.append(svgEl("line", { x1: L - 4, y1: y, x2: W - R, y2: y, class: v === 0 ? "zero" : "grid" }),
      svgEl("text", { x: L - 6, y: y + 4, "text-anchor": "end", class: "tick" }, tickText(v, ys.step)));
  }
  if (xs) {
    for (const v of xs.ticks) {
      const x = g.X(v);
      svg.append(svgEl("line", { x1: x, y1: H - B, x2: x, y2: H - B + 4, class: "axis" }),
        svgEl("text", { x, y: H - B + 16, "text-anchor": "middle", class: "tick" }, xFmt ? xFmt(v, xs.step) : tickText(v, xs.step)));
    }
  }
  svg.append(svgEl("text", { x: L + (W - L - R) / 2, y: H - 6, "text-anchor": "middle", class: "axis-title" }, xTitle),
    svgEl("text", { x: 12, y: T + (H - T - B) / 2, "text-anchor": "middle", class: "axis-title",
      transform: `rotate(-90 12 ${T + (H - T - B) / 2})` }, yTitle));
}

function legendList(entries) {
  return h("ul", { class: "legend", "aria-label": "legend" }, entries.map((e) => h("li", {},
    h("span", { class: "swatch " + (e.shape || "circle"), style: null, "data-colour": e.colour }), e.label)));
}

function figure(title, svg, legend, note) {
  const fig = h("figure", { class: "chart" }, h("figcaption", {}, title), svg, legend, note ? h("p", { class: "muted" }, note) : null);
  // swatch colours come from data attributes (the CSP allows no inline styles)
  fig.querySelectorAll(".swatch").forEach((s) => {
    const sv = svgEl("svg", { width: 12, height: 12, viewBox: "0 0 12 12", "aria-hidden": "true" });
    sv.append(marker(s.classList[1], 6, 6, s.dataset.colour, ""));
    s.replaceWith(sv);
  });
  return fig;
}

// series: [{name, colour?, points: [{x, y, label, title, shape?}]}]; x from 0, y in yRange.
function scatterChart(o) {
  const W = 480, H = 320, g = { W, H, L: 58, R: 16, T: 16, B: 48 };
  const pts = o.series.flatMap((s) => s.points.filter((p) => p.x !== null && p.x !== undefined && p.y !== null && p.y !== undefined));
  const xs = niceTicks(0, Math.max(...pts.map((p) => p.x), 1e-9) * 1.05, 4);
  const ys = niceTicks(o.yRange ? o.yRange[0] : 0, o.yRange ? o.yRange[1] : 1, 5);
  g.X = (v) => g.L + ((v - xs.lo) / (xs.hi - xs.lo)) * (W - g.L - g.R);
  g.Y = (v) => H - g.B - ((v - ys.lo) / (ys.hi - ys.lo)) * (H - g.T - g.B);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": o.title + " (" + o.xTitle + " against " + o.yTitle + ")" });
  axes(svg, g, xs, ys, o.xTitle, o.yTitle, o.xFmt);
  const placed = [];
  o.series.forEach((s, i) => {
    const colour = s.colour || PALETTE[i % PALETTE.length];
    for (const p of s.points) {
      if (p.x === null || p.x === undefined || p.y === null || p.y === undefined) continue;
      const x = g.X(p.x), y = g.Y(p.y);
      svg.append(marker(p.shape || s.shape || "circle", x, y, colour, p.title || p.label || s.name));
      placed.push({ x, y, label: p.label });
    }
  });
  placeLabels(svg, placed, { x0: g.L + 2, x1: W - g.R, y0: g.T, y1: H - g.B - 2 });
  const missing = o.series.reduce((n, s) => n + s.points.length, 0) - pts.length;
  const legend = legendList(o.series.map((s, i) => ({ label: s.name, colour: s.colour || PALETTE[i % PALETTE.length], shape: s.shape })));
  return figure(o.title, svg, legend, [o.note, missing ? missing + " point(s) with an unknown value are not drawn" : null].filter(Boolean).join("; "));
}

// Points with intervals over categories (runs or benchmarks): groups [{label}], series [{name,
// colour?, shape?}], points [{group, series, y, lo, hi, title}]. The y axis always holds zero.
function intervalChart(o) {
  const W = 480, H = 320, g = { W, H, L: 58, R: 16, T: 16, B: 64 };
  const pts = o.points.filter((p) => p.y !== null && p.y !== undefined);
  const lo = Math.min(0, ...pts.map((p) => p.lo ?? p.y)), hi = Math.max(0, ...pts.map((p) => p.hi ?? p.y));
  const ys = niceTicks(o.yRange ? o.yRange[0] : lo, o.yRange ? o.yRange[1] : hi, 4);
  const slot = (W - g.L - g.R) / Math.max(1, o.groups.length);
  g.Y = (v) => H - g.B - ((v - ys.lo) / (ys.hi - ys.lo)) * (H - g.T - g.B);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": o.title });
  axes(svg, g, null, ys, o.xTitle, o.yTitle);
  const rotate = o.groups.length > 4;
  const chars = Math.max(4, Math.floor((rotate ? 70 : slot) / 6.4));
  o.groups.forEach((grp, i) => {
    const x = g.L + slot * (i + 0.5);
    const text = grp.label.length > chars ? grp.label.slice(0, chars - 1) + "…" : grp.label;
    const t = svgEl("text", rotate ? { x, y: H - g.B + 14, "text-anchor": "end", class: "tick", transform: `rotate(-30 ${x} ${H - g.B + 14})` }
      : { x, y: H - g.B + 16, "text-anchor": "middle", class: "tick" }, text);
    t.append(svgEl("title", {}, grp.label));
    svg.append(t);
    const mine = pts.filter((p) => p.group === i);
    mine.forEach((p, k) => {
      const px = x + (k - (mine.length - 1) / 2) * Math.min(14, slot / (mine.length + 1));
      const s = o.series[p.series] || {};
      const colour = s.colour || PALETTE[p.series % PALETTE.length];
      if (p.lo !== null && p.lo !== undefined) {
        svg.append(svgEl("line", { x1: px, y1: g.Y(p.hi), x2: px, y2: g.Y(p.lo), class: "ci", stroke: colour }),
          svgEl("line", { x1: px - 4, y1: g.Y(p.hi), x2: px + 4, y2: g.Y(p.hi), class: "ci", stroke: colour }),
          svgEl("line", { x1: px - 4, y1: g.Y(p.lo), x2: px + 4, y2: g.Y(p.lo), class: "ci", stroke: colour }));
      }
      svg.append(marker(p.shape || s.shape || "circle", px, g.Y(p.y), colour, p.title || ""));
    });
  });
  const legend = legendList(o.series.map((s, i) => ({ label: s.name, colour: s.colour || PALETTE[i % PALETTE.length], shape: s.shape })));
  const missing = o.points.length - pts.length;
  return figure(o.title, svg, legend, [o.note, missing ? missing + " point(s) with an unknown value are not drawn" : null].filter(Boolean).join("; "));
}
