// The recovery canvas: draws a scene (flinkstate.views.scene) in SVG and animates what moved.
//
// Places come with abstract positions (the ownership layout: one column per kind of place,
// one lane per subtask); this module turns them into pixels that fit the container, draws
// each kind of place, and lays the items (buffers, barriers, events, write requests) out in
// their place's queue, head on the right (data flows left to right). Items keep their ids
// from one scene to the next, so an item that changed place travels there.
//
// The same module serves the live widget (anywidget: model.get / model.on) and a page
// written without a kernel (a small stand-in model that replays stored scenes).

const SVG = "http://www.w3.org/2000/svg";
const DURATION = 380; // ms an item takes to travel
const ROW = 27; // px between two queue rows
const ITEM_W = 20;
const ITEM_H = 16;
const GAP = 3;
const SOURCE_COLOURS = [
  "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#86bcb6", "#d37295", "#a0cbe8", "#8cd17d", "#b6992d", "#499894", "#fabfd2",
];
const CHECKPOINT = "#6a3d9a";
const RECOVERED = "#d97706";
const BLOCKED = "#d62728";
const ACTOR = "#facc15";
// an actor on the waits-for cycle of a deadlock: the alert red, on a tag (blocked is a frame)
const CYCLE = BLOCKED;
// what a tour's stop points at: palette.HIGHLIGHT, a hue and a shape (corner marks) no state has
const HIGHLIGHT = "#ff00ff";
const KIND_WIDTH = {
  "network-pool": 190, heap: 190, "channel-state-writer": 190,
  task: 104, "result-partition": 16, "input-gate": 16,
  subpartition: 150, "remote-channel": 150, "local-channel": 150, "recovered-channel": 150,
  "channel-state-reader": 110, drainer: 110,
};
const QUEUE_KINDS = new Set([
  "subpartition", "remote-channel", "local-channel", "recovered-channel", "channel-state-writer",
]);
const CHANNEL_KINDS = new Set(["remote-channel", "local-channel", "recovered-channel"]);
// places of a TaskManager's memory and threads, drawn in a band under the job
const BAND_KINDS = new Set(["network-pool", "heap", "channel-state-writer"]);
const BAND_ROW = 34;
const SMALL = { "font-size": 11, fill: "#374151" };
// the close-up on a tour's highlight: how far it may enlarge, its margin and its glide (ms)
const ZOOM_MAX = 1.6;
const ZOOM_PAD = 34;
const ZOOM_MS = 420;

function el(tag, attrs, parent) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, content, attrs) {
  const t = el("text", { x, y, ...(attrs || {}) }, parent);
  t.textContent = content;
  return t;
}

// a mark of the canvas's visual grammar: tagged with its glyph class, which the legend names
// (flinkstate.views.glyphs has the words; the legend lists the classes drawn)
function glyph(node, cls) {
  node.setAttribute("data-glyph", cls);
  return node;
}

// the width of a text: measured once it is in the document, estimated where it cannot be
function textWidth(node) {
  const measured = typeof node.getComputedTextLength === "function" ? node.getComputedTextLength() : 0;
  if (measured > 0) return measured;
  return String(node.textContent).length * Number(node.getAttribute("font-size") || 11) * 0.56;
}

// the first of `variants` (longest first; a variant may be [words, font size] to try a smaller
// font before shorter words) that fits in `width` px, drawn from x; none when none fits: a
// label is left out (its place's hover still says it) rather than cut, squeezed or drawn under
// an item. Returns the right end of what was drawn (x when nothing was).
function label(parent, x, y, variants, width, attrs) {
  for (const variant of variants) {
    const [words, size] = Array.isArray(variant) ? variant : [variant, undefined];
    if (!words) continue;
    const node = text(parent, x, y, words, size ? { ...attrs, "font-size": size } : attrs);
    const w = textWidth(node);
    if (w <= width) return x + w;
    node.remove();
  }
  return x;
}

// the four corner marks of a highlight around a box: a shape no state is drawn with
function corners(x, y, w, h) {
  const l = Math.max(3, Math.min(8, w / 3, h / 3));
  return `M ${x} ${y + l} V ${y} H ${x + l} M ${x + w - l} ${y} H ${x + w} V ${y + l} `
    + `M ${x + w} ${y + h - l} V ${y + h} H ${x + w - l} M ${x + l} ${y + h} H ${x} V ${y + h - l}`;
}

// watermarks and statuses: a dark slate, unlike any source or key-group colour
const WATERMARK = "#334155";

function keyGroupColour(group) {
  // a hue per key group, spread so neighbouring groups differ
  const hue = (group * 137.508) % 360;
  return `hsl(${hue.toFixed(0)},62%,52%)`;
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// Pixel geometry of a scene: columns by their x, rows by their y; the memory band below.
function geometry(scene, width) {
  const job = scene.places.filter((p) => !BAND_KINDS.has(p.kind));
  const xs = [...new Set(job.map((p) => p.x))].sort((a, b) => a - b);
  const colWidth = new Map();
  for (const p of job) {
    const w = KIND_WIDTH[p.kind] || 90;
    colWidth.set(p.x, Math.max(colWidth.get(p.x) || 0, w));
  }
  let natural = 0;
  const gaps = [];
  xs.forEach((x, i) => {
    if (i > 0) {
      const wide = x - xs[i - 1] > 1.01;
      gaps.push(wide ? 70 : 10);
      natural += gaps[gaps.length - 1];
    }
    natural += colWidth.get(x);
  });
  const margin = 12;
  const scale = Math.min(1.3, Math.max(0.55, (width - 2 * margin) / Math.max(natural, 1)));
  const left = new Map();
  let cursor = margin;
  xs.forEach((x, i) => {
    if (i > 0) cursor += gaps[i - 1] * scale;
    left.set(x, cursor);
    cursor += colWidth.get(x) * scale;
  });
  // rows: one per lane (the subtasks at one height), each as tall as its busiest column
  // needs: that column's queues ROW px apart; a lane with only collapsed tasks is one line
  const head = 30;
  const laneOf = (p) => (p.lane !== undefined ? p.lane : p.y);
  const lanes = new Map();
  for (const p of job) {
    const lane = laneOf(p);
    if (!lanes.has(lane)) lanes.set(lane, { queues: new Map(), onlyTasks: true });
    const row = lanes.get(lane);
    if (p.kind !== "task") row.onlyTasks = false;
    if (QUEUE_KINDS.has(p.kind)) row.queues.set(p.x, (row.queues.get(p.x) || 0) + 1);
  }
  const rowOf = new Map();
  let rowCursor = head + 24;
  for (const lane of [...lanes.keys()].sort((a, b) => b - a)) {
    const row = lanes.get(lane);
    const busiest = Math.max(1, ...row.queues.values());
    const perUnit = Math.max(70, (ROW * (busiest - 1)) / 0.8);
    const height = row.onlyTasks ? 50 : Math.max(62, perUnit * 0.84 + 34);
    rowOf.set(lane, { top: rowCursor, height, perUnit });
    rowCursor += height;
  }
  const jobHeight = rowCursor + 16;
  const jobY = (p) => {
    const row = rowOf.get(laneOf(p));
    return row.top + row.height / 2 + (laneOf(p) - p.y) * row.perUnit;
  };
  // the band: network pools (and the heap) in one row, channel-state writers in the next
  const band = new Map();
  const full = Math.max(width, cursor + margin);
  // as narrow as 170 px, so that a row holds every TaskManager of a job where it can (one row
  // fewer for a rescale to 7); a label too long for it takes a shorter wording
  const tms = Math.max(1, scene.places.filter((p) => p.kind === "network-pool").length);
  const slot = Math.max(170, Math.min(200, Math.floor((full - 2 * margin) / tms)));
  const perRow = Math.max(1, Math.floor((full - 2 * margin) / slot));
  let bandRows = 0;
  for (const group of [["network-pool", "heap"], ["channel-state-writer"]]) {
    const natural = (p) => [p.kind === "heap" ? 1 : 0, (p.label || "").length, p.label || ""];
    const members = scene.places.filter((p) => group.includes(p.kind)).sort((a, b) => {
      const [x, y] = [natural(a), natural(b)];
      return x[0] - y[0] || x[1] - y[1] || (x[2] < y[2] ? -1 : x[2] > y[2] ? 1 : 0);
    });
    members.forEach((p, i) => band.set(p.id, { x: margin + (i % perRow) * slot, row: bandRows + Math.floor(i / perRow) }));
    if (members.length) bandRows += Math.ceil(members.length / perRow);
  }
  return {
    width: full,
    height: jobHeight + 24 + bandRows * BAND_ROW + 12,
    bandTop: jobHeight,
    // a place narrower than its column (a gate beside a reader) sits at the column's right
    px: (p) => (band.has(p.id) ? band.get(p.id).x : left.get(p.x) + (colWidth.get(p.x) - (KIND_WIDTH[p.kind] || 90)) * scale),
    // the heap, last of its row, has what is left of the row for its words
    colWidth: (p) => (!band.has(p.id) ? (KIND_WIDTH[p.kind] || 90) * scale : p.kind === "heap" ? full - margin - band.get(p.id).x : slot - 14),
    py: (p) => (band.has(p.id) ? jobHeight + 24 + band.get(p.id).row * BAND_ROW + BAND_ROW / 2 : jobY(p)),
  };
}

function render({ model, el: root }) {
  root.classList.add("flinkstate-canvas");
  root.style.position = "relative";
  root.style.width = "100%";
  root.style.fontFamily = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif";

  const toolbar = document.createElement("div");
  toolbar.className = "flinkstate-canvas-toolbar";
  toolbar.style.cssText = "display:flex;gap:14px;align-items:center;flex-wrap:wrap;font-size:12px;margin:2px 0 4px 0;";
  root.appendChild(toolbar);

  const colourBy = document.createElement("select");
  colourBy.title = "colour records by the source subtask that read them, or by their key group";
  for (const [value, label] of [["source", "records coloured by source subtask"], ["key-group", "records coloured by key group"]]) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    colourBy.appendChild(o);
  }
  toolbar.appendChild(colourBy);
  const zoom = document.createElement("select");
  zoom.className = "flinkstate-canvas-zoom";
  zoom.title = "show the whole job, one exchange (its two operators), or one subtask and those it exchanges data with";
  toolbar.appendChild(zoom);
  // what a tour's stop points at, or all of the drawing: the learner may leave the close-up
  const fit = document.createElement("button");
  fit.className = "flinkstate-canvas-fit";
  fit.type = "button";
  fit.style.cssText = "font-size:12px;padding:1px 8px;cursor:pointer;display:none;";
  toolbar.appendChild(fit);
  // the legend folds to one line in a lesson's frame (the canvas under it stays on screen); a
  // page without a frame keeps it open
  const legendBox = document.createElement("details");
  legendBox.className = "flinkstate-canvas-legend-box";
  legendBox.style.cssText = "font-size:11.5px;color:#374151;";
  legendBox.open = !model.get("max_height");
  // folded, it is one word at the end of the toolbar's row; open, a row of its own
  const legendRow = () => (legendBox.style.flexBasis = legendBox.open ? "100%" : "auto");
  legendBox.addEventListener("toggle", legendRow);
  legendRow();
  const legendSummary = document.createElement("summary");
  legendSummary.textContent = "legend";
  legendSummary.style.cssText = "cursor:pointer;color:#6b7280;";
  legendBox.appendChild(legendSummary);
  const legend = document.createElement("div");
  legend.className = "flinkstate-canvas-legend";
  legend.style.cssText = "display:flex;gap:3px 14px;flex-wrap:wrap;align-items:center;";
  legendBox.appendChild(legend);
  toolbar.appendChild(legendBox);

  // the step's caption sits right over the drawing, so the two are read together
  const captions = document.createElement("div");
  captions.className = "flinkstate-canvas-captions";
  captions.style.cssText = "margin:0 0 4px 0;font-size:14px;line-height:1.45;";
  root.appendChild(captions);

  // in a lesson's frame the drawing is no taller than the window (max_height): it scrolls
  // inside, so the controls over it and the caption stay on screen
  const holder = document.createElement("div");
  holder.className = "flinkstate-canvas-holder";
  holder.style.cssText = "position:relative;width:100%;overflow:auto;border:1px solid #e5e7eb;border-radius:6px;background:#fcfcfd;";
  holder.style.maxHeight = model.get("max_height") || "";
  root.appendChild(holder);
  const svg = el("svg", { class: "flinkstate-canvas-svg" }, holder);
  svg.style.display = "block";
  const defs = el("defs", {}, svg);
  const hatch = el("pattern", { id: "fs-hatch", width: 5, height: 5, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
  el("rect", { width: 5, height: 5, fill: "#fff7ed" }, hatch);
  el("line", { x1: 0, y1: 0, x2: 0, y2: 5, stroke: "#fdba74", "stroke-width": 2 }, hatch);
  const arrow = el("marker", { id: "fs-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#f59e0b" }, arrow);

  const layerColumns = el("g", {}, svg);
  const layerWires = el("g", {}, svg);
  const layerPlaces = el("g", {}, svg);
  const layerMoves = el("g", {}, svg);
  const layerItems = el("g", {}, svg);
  const layerHighlight = el("g", { class: "fs-highlights" }, svg);
  const pulse = document.createElement("style");
  pulse.textContent = "@keyframes fs-pulse { 0% { opacity: 1; } 50% { opacity: .35; } 100% { opacity: 1; } } .fs-highlight { animation: fs-pulse 1.4s ease-in-out infinite; pointer-events: none; }";
  root.appendChild(pulse);

  const tooltip = document.createElement("div");
  tooltip.className = "flinkstate-canvas-tooltip";
  tooltip.style.cssText = "position:absolute;display:none;pointer-events:none;z-index:10;max-width:420px;background:#111827;color:#f9fafb;font-size:12px;line-height:1.35;padding:6px 8px;border-radius:5px;box-shadow:0 2px 8px rgba(0,0,0,.25);";
  root.appendChild(tooltip);

  // the invariants broken so far: a learner must see where the run goes wrong, not only read it
  const broken = document.createElement("div");
  broken.className = "flinkstate-canvas-broken";
  broken.style.cssText = "margin-top:6px;font-size:13px;line-height:1.4;";
  root.appendChild(broken);
  // the steps before, newest first, under the drawing
  const history = document.createElement("div");
  history.className = "flinkstate-canvas-history";
  history.style.cssText = "margin-top:4px;font-size:13px;line-height:1.4;";
  root.appendChild(history);

  const itemNodes = new Map(); // id -> {g, x, y, key}
  // id -> {g, key}: a place is drawn again only when what it shows changed (at P = 64 most of
  // a step's 257 places do not), its key all it is drawn from
  const placeNodes = new Map();
  let lastScene = null;

  function showTip(evt, html) {
    const box = root.getBoundingClientRect();
    tooltip.innerHTML = html;
    tooltip.style.display = "block";
    const x = evt.clientX - box.left + 14;
    const y = evt.clientY - box.top + 14;
    const maxLeft = root.clientWidth - tooltip.offsetWidth - 4;
    tooltip.style.left = `${Math.max(0, Math.min(x, maxLeft))}px`;
    tooltip.style.top = `${y}px`;
  }
  function hideTip() {
    tooltip.style.display = "none";
  }
  function hoverable(node, html) {
    node.addEventListener("mousemove", (e) => showTip(e, typeof html === "function" ? html() : html));
    node.addEventListener("mouseleave", hideTip);
  }

  function pieceColour(piece) {
    if (piece.length > 7) return WATERMARK;  // a watermark or status between the records
    return colourBy.value === "key-group" ? keyGroupColour(piece[5]) : SOURCE_COLOURS[piece[4] % SOURCE_COLOURS.length];
  }

  // a small picture of each glyph class for the legend, as the canvas draws it
  function swatch(cls) {
    const box = (inner) => `<svg width="18" height="16" viewBox="0 0 18 16" style="flex:none">${inner}</svg>`;
    const pill = (letter) => box(`<rect x="4" y="3" width="10" height="11" rx="5" fill="#e5e7eb" stroke="#6b7280" stroke-width="0.8"/><text x="9" y="11.5" text-anchor="middle" font-size="8" fill="#111827">${letter}</text>`);
    const request = (letter) => box(`<rect x="4" y="3" width="10" height="11" rx="1" fill="#ede9fe" stroke="${CHECKPOINT}" stroke-width="1.2"/><text x="9" y="11.5" text-anchor="middle" font-size="8" fill="${CHECKPOINT}">${letter}</text>`);
    const buffer = (inner, stroke, extra) => box(`<rect x="1" y="2" width="16" height="12" rx="2" fill="#ffffff" stroke="${stroke || "#6b7280"}" ${extra || ""}/>${inner || ""}`);
    switch (cls) {
      case "record": {
        const n = colourBy.value === "key-group" ? 4 : Math.max(1, Math.min(lastScene && lastScene.splits || 1, 4));
        const colour = (i) => (colourBy.value === "key-group" ? keyGroupColour(i * 3) : SOURCE_COLOURS[i]);
        return buffer(Array.from({ length: n }, (_, i) => `<rect x="${2 + i * 3.5}" y="4" width="3.5" height="8" fill="${colour(i)}"/>`).join(""));
      }
      case "continues": return buffer(`<rect x="2" y="4" width="8" height="8" fill="${SOURCE_COLOURS[0]}"/><rect x="2" y="4" width="1.2" height="8" fill="#111827"/>`);
      case "watermark": return buffer(`<rect x="7" y="2" width="3" height="12" fill="${WATERMARK}"/>`);
      case "filtered": return buffer(`<rect x="4" y="4" width="8" height="8" fill="${SOURCE_COLOURS[1]}" opacity="0.35"/><line x1="3" y1="13" x2="13" y2="3" stroke="#111827" stroke-width="1.6"/>`);
      case "recovered": return box('<rect x="1" y="2" width="16" height="12" rx="2" fill="#fff7ed" stroke="#d97706" stroke-dasharray="3 1.5"/><line x1="4" y1="14" x2="14" y2="2" stroke="#fdba74" stroke-width="2"/>');
      case "persisted": return buffer("", CHECKPOINT, 'stroke-width="2.2"');
      case "barrier": return box('<rect x="6" y="1" width="5" height="14" rx="1" fill="#111827"/>');
      case "recovery-barrier": return box(`<rect x="6.75" y="1.75" width="3.5" height="12.5" rx="1" fill="#ffffff" stroke="${RECOVERED}" stroke-width="1.5"/><line x1="8.5" y1="3" x2="8.5" y2="13" stroke="#111827" stroke-width="1.2"/>`);
      case "event-E": return pill("E");
      case "event-O": return pill("O");
      case "event-I": return pill("I");
      case "event-D": return pill("D");
      case "event-other": return pill("\u2022");
      case "request-i": return request("i");
      case "request-o": return request("o");
      case "overflow": return box('<text x="9" y="12" text-anchor="middle" font-size="10" font-weight="700" fill="#111827">+N</text>');
      case "free": return box('<rect x="3" y="3" width="4" height="10" fill="none" stroke="#9ca3af" stroke-width="0.8"/><rect x="9" y="3" width="4" height="10" fill="none" stroke="#9ca3af" stroke-width="0.8"/>');
      case "partial": return box('<rect x="6" y="2" width="6" height="12" fill="#e5e7eb" stroke="#6b7280" stroke-width="0.8"/><rect x="6" y="8" width="6" height="6" fill="#6b7280"/>');
      case "gauge": return box('<rect x="4" y="1" width="10" height="14" rx="2" fill="#f8fafc" stroke="#9ca3af"/><rect x="5.5" y="8" width="7" height="6" fill="#60a5fa"/>');
      case "unconverted": return box(`<text x="9" y="12" text-anchor="middle" font-size="10" font-weight="700" fill="${RECOVERED}">R</text>`);
      case "acknowledged": return box(`<text x="9" y="12" text-anchor="middle" font-size="12" fill="${CHECKPOINT}">\u2713</text>`);
      case "waits": return box('<rect x="0" y="3" width="18" height="10" rx="3" fill="#f59e0b"/>');
      case "cycle": return box(`<rect x="0" y="3" width="18" height="10" rx="3" fill="${CYCLE}"/>`);
      case "blocked": return box(`<rect x="1" y="2" width="16" height="12" rx="3" fill="#ffffff" stroke="${BLOCKED}" stroke-width="2.2"/>`);
      case "actor": return box(`<rect x="1.5" y="1.5" width="15" height="13" rx="4" fill="none" stroke="${ACTOR}" stroke-width="3"/>`);
      case "move": return box('<line x1="1" y1="8" x2="15" y2="8" stroke="#f59e0b" stroke-width="2" marker-end="url(#fs-arrow)"/>');
      case "collapsed": return box('<rect x="1" y="2" width="16" height="12" rx="3" fill="#f3f4f6" stroke="#9ca3af" stroke-dasharray="4 2"/><text x="5" y="11" font-size="8" fill="#374151">\u25b8</text>');
      case "highlight": return box(`<path d="${corners(1.5, 1.5, 15, 13)}" fill="none" stroke="${HIGHLIGHT}" stroke-width="2.5"/>`);
      default: return box("");
    }
  }

  // the glyph classes on screen: items hidden for want of room, or fading out, do not count
  function drawnGlyphs() {
    const found = new Set();
    for (const node of svg.querySelectorAll("[data-glyph]")) {
      const item = node.closest(".fs-item");
      if (item && (item.dataset.hidden === "1" || item.dataset.gone === "1")) continue;
      for (const cls of node.dataset.glyph.split(" ")) found.add(cls);
    }
    return found;
  }

  // the scene's legend (flinkstate.views.glyphs: the words of every glyph class the scene may be
  // drawn with), less the classes not on screen
  function drawLegend(scene) {
    legend.replaceChildren();
    const drawn = drawnGlyphs();
    for (const [cls, words] of scene.legend || []) {
      if (!drawn.has(cls)) continue;
      let said = words;
      if (cls === "record") {
        const from = scene.sources_said || "";
        said += colourBy.value === "key-group" ? ", coloured by its key group" : `, coloured by the subtask it comes from${from ? ` (${from})` : ""}`;
      }
      const span = document.createElement("span");
      span.className = "flinkstate-legend-entry";
      span.dataset.glyph = cls;
      span.style.cssText = "display:inline-flex;align-items:center;gap:4px;white-space:nowrap;";
      span.innerHTML = `${swatch(cls)}<span>${escapeHtml(said)}</span>`;
      legend.appendChild(span);
    }
  }

  function placeHover(p) {
    let html = p.hover;
    if (p.watermark !== undefined) html += `<br>watermark <b>${escapeHtml(p.watermark)}</b> (what it has passed on; none: not every input has one yet)`;
    if (p.collapsed) html += `<br><b>collapsed</b>: ${p.collapsed.in} buffer(s) in its input channels, ${p.collapsed.out} in its subpartitions; click to open its lane`;
    if (p.flink) html += `<br><i>Flink: ${escapeHtml(p.flink)}</i>`;
    if (p.waits) html += `<br><b>${escapeHtml(p.waits)}</b>`;
    return html;
  }

  function itemHover(item) {
    if (item.kind === "request") {
      return `write request of checkpoint ${item.checkpoint}: ${item.side} state of ${escapeHtml(item.of)}<br>${item.bytes} bytes, ${item.records.length} record(s)<br><i>Flink: ChannelStateWriteRequest</i>`;
    }
    if (item.kind !== "buffer") {
      let s = `<b>${escapeHtml(item.event)}</b>`;
      if (item.checkpoint !== undefined) s += `<br>checkpoint ${item.checkpoint}${item.priority ? " (unaligned: a priority event, it overtakes buffers)" : " (aligned: in stream order)"}`;
      if (item.descriptor) s += `<br>the buffers behind it come from old subtask ${item.descriptor[0]}, old channel ${item.descriptor[1]}`;
      return s;
    }
    const records = new Set(item.pieces.filter((p) => p.length <= 7).map((p) => p[0]));
    let s = `<b>buffer</b> ${item.used} of ${item.capacity} bytes, ${records.size} record(s)`;
    if (item.heap) s += " (on the heap)";
    if (item.recovered) s += "<br>recovered from channel state";
    if (item.persisted !== undefined) s += `<br>persisted by checkpoint ${item.persisted}`;
    const rows = item.pieces.slice(0, 8).map((p) => {
      if (p.length > 7) return `<b>${escapeHtml(p[7])}</b> (${p[3]} bytes between the records)`;
      const whole = p[1] === 0 && p[1] + p[2] === p[3];
      const part = whole ? "whole" : `bytes ${p[1]}–${p[1] + p[2]} of ${p[3]}`;
      const mark = p[6] === "dropped" ? " — filtered out here" : "";
      return `record ${p[0]} (${part}, key group ${p[5]})${mark}`;
    });
    if (item.pieces.length > 8) rows.push(`… ${item.pieces.length - 8} more`);
    return `${s}<br>${rows.join("<br>")}`;
  }

  // -- places -----------------------------------------------------------------------------

  function drawPlaces(scene, g) {
    layerColumns.replaceChildren();
    layerWires.replaceChildren();
    const pos = new Map();
    for (const p of scene.places) {
      const x = g.px(p);
      const w = g.colWidth(p);
      const y = g.py(p);
      pos.set(p.id, { x, y, w, p });
    }
    // operator labels above their columns
    for (const c of scene.columns) {
      const tasks = scene.places.filter((p) => p.kind === "task" && Math.abs(p.x - c.x) < 1e-6);
      if (!tasks.length) continue;
      const x = g.px(tasks[0]) + g.colWidth(tasks[0]) / 2;
      text(layerColumns, x, 18, c.label, { "text-anchor": "middle", "font-size": 14, "font-weight": 600, fill: "#111827" });
    }
    el("line", { x1: 8, x2: g.width - 8, y1: g.bandTop, y2: g.bandTop, stroke: "#e5e7eb" }, layerColumns);
    text(layerColumns, 10, g.bandTop + 15, "TaskManagers: network buffer pools and channel-state writer threads", { "font-size": 11, fill: "#6b7280" });
    // wires: a subpartition's right edge to its channel's left edge
    for (const wire of scene.wires) {
      const a = pos.get(wire.from);
      const b = pos.get(wire.to);
      if (!a || !b) continue;
      const x1 = wire.kind === "restore" || wire.kind === "drain" ? a.x + a.w : a.x + a.w;
      const x2 = b.x;
      const mid = (x1 + x2) / 2;
      const path = el("path", {
        d: `M ${x1} ${a.y} C ${mid} ${a.y}, ${mid} ${b.y}, ${x2} ${b.y}`,
        fill: "none",
        stroke: wire.kind === "remote" ? "#94a3b8" : wire.kind === "local" ? "#cbd5e1" : RECOVERED,
        "stroke-width": 1.2,
        "stroke-dasharray": wire.kind === "remote" ? "5 3" : wire.kind === "local" ? "" : "2 3",
      }, layerWires);
      path.classList.add(`fs-wire-${wire.kind}`);
    }
    let previous = null; // the place node drawn last, in the scene's order
    const shown = new Set();
    const room = itemRoom(scene);
    for (const spot of pos.values()) {
      const { x, y, w, p } = spot;
      const actor = scene.actor === p.id;
      const needs = room.get(p.id) || 0;
      const key = JSON.stringify([x, y, w, actor, needs, p]);
      let entry = placeNodes.get(p.id);
      if (!entry || entry.key !== key) {
        const g2 = el("g", { class: `fs-place fs-${p.kind}`, "data-id": p.id });
        // in its place in the document before it is drawn: its texts are measured there
        layerPlaces.insertBefore(g2, previous ? previous.nextSibling : layerPlaces.firstChild);
        const inner = drawPlace(g2, p, x, y, w, needs);
        if (actor) g2.classList.add("fs-actor");
        hoverable(g2, () => placeHover(p));
        if (entry) entry.g.remove();
        entry = { g: g2, key, inner: inner === undefined ? x : inner };
        placeNodes.set(p.id, entry);
      } else if ((previous ? previous.nextSibling : layerPlaces.firstChild) !== entry.g) {
        layerPlaces.insertBefore(entry.g, previous ? previous.nextSibling : layerPlaces.firstChild);
      }
      spot.inner = entry.inner; // where its items may start: right of its label
      previous = entry.g;
      shown.add(p.id);
    }
    for (const [id, entry] of placeNodes) {
      if (shown.has(id)) continue;
      entry.g.remove();
      placeNodes.delete(id);
    }
    return pos;
  }

  // the room, in px, the items of each place want inside its box (a task: its deserializer's
  // buffer); its label takes what is left
  function itemRoom(scene) {
    const room = new Map();
    for (const item of scene.items) {
      const add = item.lane === "deserializer" ? ITEM_W + 8 : itemWidth(item) + GAP;
      room.set(item.place, (room.get(item.place) || 0) + add);
    }
    return room;
  }

  function frame(g2, x, y, w, h, p, extra) {
    const blocked = p.blocked || p.no_credit;
    const r = el("rect", {
      x, y, width: w, height: h, rx: 4,
      fill: (extra && extra.fill) || "#ffffff",
      stroke: blocked ? BLOCKED : "#9ca3af",
      "stroke-width": blocked ? 2.2 : 1,
      ...(extra && extra.dash ? { "stroke-dasharray": extra.dash } : {}),
    }, g2);
    if (blocked) glyph(r, "blocked");
    if (lastScene && lastScene.actor === p.id) {
      glyph(el("rect", { x: x - 3, y: y - 3, width: w + 6, height: h + 6, rx: 6, fill: "none", stroke: ACTOR, "stroke-width": 3, class: "fs-actor-ring" }, g2), "actor");
    }
    return r;
  }

  // a waiting actor: a small amber tag, what it waits for on hover; one on the waits-for
  // cycle of a deadlock: a red tag saying "cycle"
  const WAITS_W = 30;
  function waitsMark(g2, right, bottom, cycle) {
    glyph(el("rect", { x: right - WAITS_W, y: bottom - 11, width: WAITS_W, height: 11, rx: 3, fill: cycle ? CYCLE : "#f59e0b" }, g2), cycle ? "cycle" : "waits");
    text(g2, right - WAITS_W / 2, bottom - 2.5, cycle ? "cycle" : "waits", { "text-anchor": "middle", "font-size": 8.5, fill: "#fff", "font-weight": 700 });
  }

  // draws place p; returns, for a queue, where its items may start (right of its label)
  function drawPlace(g2, p, x, y, w, needs) {
    switch (p.kind) {
      case "task":
        if (p.collapsed) drawCollapsed(g2, p, x, y, w);
        else drawTask(g2, p, x, y, w, needs);
        return undefined;
      case "subpartition":
      case "remote-channel":
      case "local-channel":
      case "recovered-channel":
      case "channel-state-writer":
        return drawQueue(g2, p, x, y, w, needs);
      case "result-partition":
      case "input-gate":
        drawPool(g2, p, x, y, w);
        return undefined;
      case "network-pool": {
        const h = 22;
        frame(g2, x, y - h / 2, w, h, p, { fill: "#f8fafc" });
        if (p.gauge) {
          const used = p.gauge[1] ? p.gauge[0] / p.gauge[1] : 0;
          const bar = el("rect", { x: x + 1, y: y - h / 2 + 1, width: Math.max(0, (w - 2) * used), height: h - 2, fill: "#bfdbfe" }, g2);
          if (used > 0) glyph(bar, "gauge");
          label(g2, x + 5, y + 4, [`${p.label}: ${p.gauge[0]} of ${p.gauge[1]} in use`, `${p.label}: ${p.gauge[0]}/${p.gauge[1]}`, `${p.gauge[0]}/${p.gauge[1]}`], w - 10, SMALL);
        }
        return undefined;
      }
      case "heap": {
        const [bytes, peak] = [(p.heap_bytes || 0).toLocaleString(), (p.heap_peak || 0).toLocaleString()];
        label(g2, x, y + 4, [`heap for recovery: ${bytes} B (peak ${peak})`, `heap ${bytes} B (peak ${peak})`, `heap ${bytes} B`], w, SMALL);
        return undefined;
      }
      case "channel-state-reader":
      case "drainer":
        drawReader(g2, p, x, y, w);
        return undefined;
      default:
        frame(g2, x, y - 10, w, 20, p);
        label(g2, x + 4, y + 4, [p.label || p.kind], w - 8, SMALL);
        return undefined;
    }
  }

  function drawCollapsed(g2, p, x, y, w) {
    const h = 40;
    glyph(frame(g2, x, y - h / 2, w, h, p, { fill: "#f3f4f6", dash: "4 2" }), "collapsed");
    label(g2, x + 6, y - h / 2 + 14, [`\u25b8 ${p.label}`, [`\u25b8 ${p.label}`, 10], `\u25b8 ${(p.label || "").replace(/^.*(\[\d+\])$/, "$1")}`], w - 12, { "font-size": 12, "font-weight": 600, fill: "#374151" });
    label(g2, x + 6, y - h / 2 + 28, [`in ${p.collapsed.in} · out ${p.collapsed.out}`, `${p.collapsed.in} · ${p.collapsed.out}`], w - 12, { ...SMALL, "font-size": 10.5 });
    if (p.waits || p.cycle) waitsMark(g2, x + w - 3, y - h / 2, p.cycle);
    if (typeof model.send === "function") {
      g2.style.cursor = "pointer";
      g2.addEventListener("click", () => model.send({ expand: p.task }));
    }
  }

  // a task: its name, then its phase or progress; its deserializer's buffer at the bottom
  // right (needs > 0), the "waits" tag on its top edge, the checkpoint's tick at the top right
  function drawTask(g2, p, x, y, w, needs) {
    const h = 40;
    const phases = { "restoring-output": "restoring output", recovering: "recovering input" };
    const phase = p.failover ? p.failover.toLowerCase() : p.phase && p.phase !== "running" ? phases[p.phase] || p.phase : p.finished ? "finished" : "";
    const fill = p.failover ? "#fee2e2" : p.phase && p.phase !== "running" ? "#fff7ed" : "#eef2ff";
    frame(g2, x, y - h / 2, w, h, p, { fill });
    const tick = p.acknowledged ? 12 : 0;
    const index = (p.label || "").replace(/^.*(\[\d+\])$/, "$1");
    label(g2, x + 6, y - h / 2 + 14, [p.label, [p.label, 10.5], [p.label, 9.5], index], w - 10 - tick, { "font-size": 12, "font-weight": 600, fill: "#1e3a8a" });
    // with event time the line is short enough for the narrowest box: "12 rec · wm 57"
    const progress = p.watermark === undefined
      ? [`processed ${p.processed}`, `${p.processed} rec`, String(p.processed)]
      : [`${p.processed ? `${p.processed} rec · ` : ""}wm ${p.watermark}`, `wm ${p.watermark}`];
    const words = phase ? [phase, [phase, 9], phase.split(" ")[0]] : progress;
    // short of the held buffer, and of its checkpoint number left of it
    label(g2, x + 6, y - h / 2 + 28, words, w - 10 - (needs ? ITEM_W + 14 : 0), { ...SMALL, "font-size": 10.5 });
    if (p.acknowledged) glyph(text(g2, x + w - 4, y - h / 2 + 14, "✓", { "text-anchor": "end", "font-size": 12, fill: CHECKPOINT }), "acknowledged");
    if (p.expanded && typeof model.send === "function") {
      const fold = text(g2, x + 2, y - h / 2 - 3, "fold \u25b4", { "font-size": 10, fill: "#2563eb" });
      fold.style.cursor = "pointer";
      fold.addEventListener("click", (e) => { e.stopPropagation(); model.send({ collapse: p.task }); });
    }
    if (p.waits || p.cycle) waitsMark(g2, x + w - 3, y - h / 2, p.cycle);
  }

  // a queue (a subpartition, a channel, a writer's requests): a label at the left, as long as
  // the items leave room for; its items fill from the right
  function drawQueue(g2, p, x, y, w, needs) {
    const h = ITEM_H + 6;
    const recovered = p.kind === "recovered-channel" || p.in_recovery;
    frame(g2, x, y - h / 2, w, h, p, recovered ? { fill: "#fffbeb", dash: "4 2" } : {});
    const room = w - 8 - Math.min(needs, w * 0.6);
    const attrs = { "font-size": 9.5, fill: p.no_credit || (p.blocked && !CHANNEL_KINDS.has(p.kind)) ? BLOCKED : "#9ca3af" };
    let words = [];
    if (p.kind === "channel-state-writer") words = [`writer ${p.label}`, p.label];
    else if (CHANNEL_KINDS.has(p.kind)) words = channelWords(p);
    else if (p.blocked) words = ["blocked"];
    const right = label(g2, x + 4, y + 3.5, words, room, attrs);
    if (CHANNEL_KINDS.has(p.kind)) drawChannelMarks(g2, p, x, y, w);
    return right;
  }

  // a channel's label, longest first: credit and backlog, or what kind of channel it is
  function channelWords(p) {
    const done = p.finished ? " · done" : "";
    if (p.no_credit) return [`no credit${done}`, "no credit", "no cr."];
    if (p.credit !== undefined) return [`credit ${p.credit} · backlog ${p.backlog}${done}`, `credit ${p.credit} · bl ${p.backlog}`, `cr ${p.credit}`];
    if (p.kind === "recovered-channel") return [`recovered${done}`, "recovered", "rec."];
    if (p.in_recovery) return [`in recovery${done}`, "in recovery", "rec."];
    if (!p.remote) return [`local${done}`, "local"];
    return done ? ["done"] : [];
  }

  // free buffers of the channel (exclusive and floating) as small empty slots at its left, the
  // deserializer's part of a record spanning buffers as a bar at its right
  function drawChannelMarks(g2, p, x, y, w) {
    const free = (p.exclusive_free || 0) + (p.floating || 0) + (p.recovery_free || 0);
    for (let i = 0; i < Math.min(free, 6); i++) {
      const slot = el("rect", { x: x - 7 - i * 5, y: y - 5, width: 4, height: 10, fill: "none", stroke: "#9ca3af", "stroke-width": 0.8 }, g2);
      if (i === 0) glyph(slot, "free");
    }
    if (p.partial) {
      const [record, got, total] = p.partial;
      const bar = glyph(el("rect", { x: x + w + 2, y: y - 6, width: 6, height: 12, fill: "#e5e7eb", stroke: "#6b7280", "stroke-width": 0.8 }, g2), "partial");
      el("rect", { x: x + w + 2, y: y + 6 - (12 * got) / total, width: 6, height: (12 * got) / total, fill: "#6b7280" }, g2);
      bar.classList.add("fs-partial");
      hoverable(bar, `the deserializer holds ${got} of ${total} bytes of record ${record}: it spans buffers`);
    }
  }

  // a partition's or gate's pool: a gauge of its buffers in use; a gate still reading
  // recovered channels has an R at its top, inside its box (below it is the reader's row)
  function drawPool(g2, p, x, y, w) {
    const h = 30;
    frame(g2, x, y - h / 2, w, h, p, { fill: "#f8fafc" });
    const unconverted = p.kind === "input-gate" && p.converted === false;
    const room = h - 6 - (unconverted ? 11 : 0);
    if (p.gauge && p.gauge[1] > 0 && p.gauge[0] > 0) {
      const used = Math.min(1, p.gauge[0] / p.gauge[1]);
      glyph(el("rect", { x: x + 3, y: y + h / 2 - 3 - room * used, width: w - 6, height: room * used, fill: "#60a5fa" }, g2), "gauge");
    }
    if (unconverted) {
      glyph(text(g2, x + w / 2, y - h / 2 + 11, "R", { "text-anchor": "middle", "font-size": 9, fill: RECOVERED, "font-weight": 700 }), "unconverted");
    }
  }

  function drawReader(g2, p, x, y, w) {
    const h = 20;
    frame(g2, x, y - h / 2, w, h, p, { fill: "#fff7ed", dash: "3 2" });
    const name = p.kind === "drainer" ? "drainer" : "reader";
    let words;
    if (p.kind === "channel-state-reader") {
      const chunks = `${p.chunks} chunk(s)`;
      words = p.finished ? [`${name} · done`, "done"] : [`${name} · ${chunks}`, [`${name} · ${chunks}`, 9], chunks, String(p.chunks)];
    } else {
      const files = p.spill_files ? ` · ${p.spill_files} spill file(s)` : "";
      const done = p.finished ? " · done" : "";
      words = [`${name}${files}${done}`, `${name}${done}`, name];
    }
    label(g2, x + 4, y + 4, words, w - 8 - (p.waits || p.cycle ? WAITS_W + 4 : 0), { "font-size": 10, fill: "#9a3412" });
    if (p.waits || p.cycle) waitsMark(g2, x + w - 3, y + 6, p.cycle);
  }

  // -- items -------------------------------------------------------------------------------

  function itemWidth(item) {
    if (item.kind === "buffer") return ITEM_W;
    if (item.kind === "barrier") return 6;
    if (item.kind === "request") return 10;
    return 10;
  }

  // where an item sits: queues fill from the right (the head) to the left
  function layoutItems(scene, pos) {
    const out = new Map();
    const byPlace = new Map();
    for (const item of scene.items) {
      if (!byPlace.has(item.place)) byPlace.set(item.place, []);
      byPlace.get(item.place).push(item);
    }
    for (const [placeId, items] of byPlace) {
      const place = pos.get(placeId);
      if (!place) continue;
      const { x, y, w, p } = place;
      if (p.kind === "task") {
        for (const item of items) out.set(item.id, { x: x + w - ITEM_W - 6, y: y + 2, hidden: false });
        continue;
      }
      if (p.kind === "channel-state-reader" || p.kind === "drainer") {
        items.forEach((item, i) => out.set(item.id, { x: x + w + 3 + i * (ITEM_W + GAP), y: y - ITEM_H / 2, hidden: false }));
        continue;
      }
      // order: head first; lanes: a channel's recovered queue, then its stash, then received
      const lanes = ["recovered", "stash", "received", "queue", "builder", "request", "post-filter"];
      items.sort((a, b) => lanes.indexOf(a.lane) - lanes.indexOf(b.lane) || a.slot - b.slot);
      // right of the place's label; when not all fit, "+N" (how many do not) goes there
      const limit = Math.max(x + 2, (place.inner === undefined ? x : place.inner) + GAP);
      const fits = (start) => {
        let right = x + w - 3;
        let n = 0;
        for (const item of items) {
          const left = right - itemWidth(item);
          if (left < start) break;
          n += 1;
          right = left - GAP;
        }
        return n;
      };
      // "+N" in bold 10 px: about 7 px a digit and 8.5 for the plus, a pixel to spare
      const badge = (n) => 7.2 * String(items.length - n).length + 9.5 + GAP;
      let shown = fits(limit);
      if (shown < items.length) shown = fits(limit + badge(shown));
      let right = x + w - 3;
      items.forEach((item, i) => {
        if (i >= shown) {
          out.set(item.id, { x: right - itemWidth(item), y: y - ITEM_H / 2, hidden: true });
          return;
        }
        right -= itemWidth(item);
        out.set(item.id, { x: right, y: y - ITEM_H / 2, hidden: false });
        right -= GAP;
      });
      if (shown < items.length) out.set(`overflow:${placeId}`, { x: limit, y, count: items.length - shown });
    }
    return out;
  }

  function drawItem(g2, item) {
    g2.replaceChildren();
    if (item.kind === "barrier") {
      const recovery = item.event === "RecoveryCheckpointBarrier";
      const colour = recovery ? RECOVERED : "#111827";
      // a little taller than a buffer, its number as high as a persisted buffer's: both stay in
      // the gap between two queues, clear of the items of the queue above
      if (recovery) {
        // hollow, amber-edged, a dark line down its middle: not a checkpoint's solid black bar,
        // and not the amber hatching of the recovered buffers it closes
        glyph(el("rect", { x: 0.75, y: -0.25, width: 4.5, height: ITEM_H + 0.5, rx: 1, fill: "#ffffff", stroke: colour, "stroke-width": 1.5 }, g2), "recovery-barrier");
        el("line", { x1: 3, y1: 1, x2: 3, y2: ITEM_H, stroke: "#111827", "stroke-width": 1.2 }, g2);
      } else {
        glyph(el("rect", { x: 0, y: -1, width: 6, height: ITEM_H + 2, rx: 1, fill: colour }, g2), "barrier");
      }
      text(g2, 3, -2.5, String(item.checkpoint), { "text-anchor": "middle", "font-size": 8, fill: colour, "font-weight": 700 });
      return;
    }
    if (item.kind === "event") {
      const letter = { "end of partition": "E", "end of output state": "O", "end of input state": "I", descriptor: "D" }[item.label];
      glyph(el("rect", { x: 0, y: 2, width: 10, height: ITEM_H - 4, rx: 5, fill: "#e5e7eb", stroke: "#6b7280", "stroke-width": 0.8 }, g2), `event-${letter || "other"}`);
      text(g2, 5, ITEM_H / 2 + 3, letter || "•", { "text-anchor": "middle", "font-size": 8, fill: "#111827" });
      return;
    }
    if (item.kind === "request") {
      glyph(el("rect", { x: 0, y: 2, width: 10, height: ITEM_H - 4, rx: 1, fill: "#ede9fe", stroke: CHECKPOINT, "stroke-width": 1.2 }, g2), item.side === "output" ? "request-o" : "request-i");
      text(g2, 5, ITEM_H / 2 + 3, item.side === "output" ? "o" : "i", { "text-anchor": "middle", "font-size": 8, fill: CHECKPOINT });
      return;
    }
    const persisted = item.persisted !== undefined;
    const body = el("rect", {
      x: 0, y: 0, width: ITEM_W, height: ITEM_H, rx: 2,
      fill: item.recovered ? "url(#fs-hatch)" : "#ffffff",
      stroke: persisted ? CHECKPOINT : item.recovered ? RECOVERED : "#6b7280",
      "stroke-width": persisted ? 2.2 : 1,
      ...(item.recovered && !persisted ? { "stroke-dasharray": "3 1.5" } : {}),
    }, g2);
    glyph(body, [persisted ? "persisted" : "", item.recovered ? "recovered" : ""].join(" ").trim());
    if (!body.dataset.glyph) body.removeAttribute("data-glyph");
    drawPieces(g2, item);
    if (!persisted) return;
    // its checkpoint's number above it; a task's buffer (its deserializer's) has the task's name
    // above it, so the number goes to its left, on the line of the task's progress
    const [nx, ny] = item.lane === "deserializer" ? [-2, ITEM_H - 4] : [ITEM_W - 1, -2];
    text(g2, nx, ny, String(item.persisted), { "text-anchor": "end", "font-size": 8, fill: CHECKPOINT, "font-weight": 700 });
  }

  // pieces: a stripe per fragment, widths by bytes (at least 1.5 px; a filtered one at least
  // 6 px, so that its stroke is seen), within the bytes used
  function drawPieces(g2, item) {
    const inner = ITEM_W - 2;
    const total = Math.max(item.capacity, 1);
    let cursor = 1;
    for (const piece of item.pieces) {
      const mark = piece.length > 7;  // a watermark or status: a full-height marker, 2.5 px at least
      const dropped = piece[6] === "dropped";
      const w = Math.max(mark ? 2.5 : dropped ? 6 : 1.5, (inner * piece[2]) / total);
      if (cursor + w > ITEM_W - 1) break;
      glyph(el("rect", { x: cursor, y: mark ? 0 : 2, width: w, height: mark ? ITEM_H : ITEM_H - 4, fill: pieceColour(piece), opacity: dropped ? 0.35 : 1 }, g2), mark ? "watermark" : "record");
      if (piece[1] > 0 && !mark) glyph(el("rect", { x: cursor, y: 2, width: 1, height: ITEM_H - 4, fill: "#111827" }, g2), "continues");
      if (dropped) strike(g2, cursor, w);
      cursor += w;
    }
  }

  // a filtered record's stroke: at least 8 px across, over a white halo, so it reads on any
  // stripe and on the hatching of a recovered buffer
  function strike(g2, x, w) {
    const half = Math.max(4, w / 2 + 0.5);
    const [x1, x2] = [Math.max(0, x + w / 2 - half), Math.min(ITEM_W, x + w / 2 + half)];
    el("line", { x1, y1: ITEM_H - 1.5, x2, y2: 1.5, stroke: "#ffffff", "stroke-width": 3.4, "stroke-linecap": "round" }, g2);
    glyph(el("line", { x1, y1: ITEM_H - 1.5, x2, y2: 1.5, stroke: "#111827", "stroke-width": 1.8, "stroke-linecap": "round" }, g2), "filtered");
  }

  function place(node, x, y, animate, fromX, fromY) {
    const target = `translate(${x}px, ${y}px)`;
    // an item that stays where it is: no travel, and no layout forced to start one
    if (animate && fromX === x && fromY === y && node.style.transform === target) return;
    if (animate && fromX !== undefined) {
      node.style.transition = "none";
      node.style.transform = `translate(${fromX}px, ${fromY}px)`;
      // force the start position, then travel
      node.getBoundingClientRect();
      node.style.transition = `transform ${DURATION}ms ease-in-out, opacity ${DURATION}ms`;
    } else if (!animate) {
      node.style.transition = "none";
    }
    node.style.transform = target;
  }

  function drawItems(scene, pos, animate) {
    const spots = layoutItems(scene, pos);
    const seen = new Set();
    layerItems.querySelectorAll(".fs-overflow").forEach((n) => n.remove());
    for (const item of scene.items) {
      const spot = spots.get(item.id);
      if (!spot) continue;
      seen.add(item.id);
      let entry = itemNodes.get(item.id);
      const fresh = !entry;
      if (fresh) {
        const g2 = el("g", { class: `fs-item fs-item-${item.kind}`, "data-id": item.id }, layerItems);
        entry = { g: g2, x: spot.x, y: spot.y };
        itemNodes.set(item.id, entry);
        hoverable(g2, () => itemHover(entry.item));
      }
      entry.item = item;
      const key = JSON.stringify([colourBy.value, item]);
      if (entry.key !== key) {
        drawItem(entry.g, item); // only what changed is drawn again
        entry.key = key;
      }
      entry.g.style.opacity = spot.hidden ? "0" : "1";
      entry.g.dataset.hidden = spot.hidden ? "1" : "";
      let fromX = entry.x;
      let fromY = entry.y;
      if (fresh) {
        const origin = item.from && itemNodes.get(item.from);
        if (origin) {
          fromX = origin.x;
          fromY = origin.y;
        } else if (item.kind === "barrier" && item.priority && item.slot === 0) {
          // an unaligned barrier is put at the head: show it jumping over the queue
          const queue = scene.items.filter((i) => i.place === item.place && i.id !== item.id && spots.get(i.id) && !spots.get(i.id).hidden);
          const tail = Math.min(spot.x, ...queue.map((i) => spots.get(i.id).x));
          fromX = tail - 10;
          fromY = spot.y - 14;
        } else if (animate) {
          fromX = spot.x;
          fromY = spot.y + 10;
          entry.g.style.opacity = "0";
          requestAnimationFrame(() => (entry.g.style.opacity = spot.hidden ? "0" : "1"));
        }
      }
      place(entry.g, spot.x, spot.y, animate, fromX, fromY);
      entry.x = spot.x;
      entry.y = spot.y;
      entry.hidden = spot.hidden;
    }
    for (const [id, entry] of itemNodes) {
      if (seen.has(id)) continue;
      itemNodes.delete(id);
      entry.g.dataset.gone = "1";
      if (animate) {
        entry.g.style.transition = `opacity ${DURATION}ms`;
        entry.g.style.opacity = "0";
        setTimeout(() => entry.g.remove(), DURATION);
      } else {
        entry.g.remove();
      }
    }
    for (const [key, spot] of spots) {
      if (!key.startsWith("overflow:")) continue;
      const t = glyph(text(layerItems, spot.x, spot.y + 4, `+${spot.count}`, { "font-size": 10, "font-weight": 700, fill: "#111827" }), "overflow");
      t.classList.add("fs-overflow");
    }
  }

  function drawMoves(scene, pos, animate) {
    layerMoves.replaceChildren();
    if (!animate) return;
    for (const move of scene.moves || []) {
      const a = pos.get(move.from);
      const b = pos.get(move.to);
      if (!a || !b) continue;
      const line = glyph(el("line", {
        x1: a.x + a.w / 2, y1: a.y, x2: b.x + b.w / 2, y2: b.y,
        stroke: "#f59e0b", "stroke-width": 2, "marker-end": "url(#fs-arrow)", opacity: 0.85,
      }, layerMoves), "move");
      line.style.transition = `opacity ${DURATION * 3}ms`;
      requestAnimationFrame(() => requestAnimationFrame(() => (line.style.opacity = "0.15")));
    }
  }

  // corner marks around what a tour's stop points at (in the legend while any is on screen)
  let lastPos = null;
  function drawHighlights() {
    layerHighlight.replaceChildren();
    const ids = model.get("highlight") || [];
    if (ids.length && lastPos) {
      for (const id of ids) {
        const box = highlightBox(id);
        if (!box) continue;
        glyph(el("path", { d: corners(box.x, box.y, box.w, box.h), fill: "none", stroke: HIGHLIGHT, "stroke-width": 3, "stroke-linecap": "square", class: "fs-highlight" }, layerHighlight), "highlight");
      }
    }
    if (lastScene) drawLegend(lastScene);
  }

  function highlightBox(id) {
    const place = lastPos.get(id);
    const item = itemNodes.get(id);
    if (item && !item.hidden) {
      const w = itemWidth(item.item);
      return { x: item.x - 3, y: item.y - 3, w: w + 6, h: ITEM_H + 6 };
    }
    if (!place) return null;
    const h = place.p.kind === "task" ? 46 : 28;
    return { x: place.x - 4, y: place.y - h / 2, w: place.w + 8, h };
  }

  // The close-up: the part of the drawing a tour's stop points at, in the window's share of the
  // canvas (no taller than max_height), with the job around it; a learner who asks for all of
  // it gets the whole drawing back until the highlight changes.
  let lastGeometry = null;
  let wholeChosen = false;
  let highlightKey = "";
  let shownView = null;
  let viewFrame = null;

  function highlightBounds() {
    const ids = model.get("highlight") || [];
    if (!ids.length || !lastPos) return null;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const id of ids) {
      const b = highlightBox(id);
      if (!b) continue;
      x0 = Math.min(x0, b.x);
      y0 = Math.min(y0, b.y);
      x1 = Math.max(x1, b.x + b.w);
      y1 = Math.max(y1, b.y + b.h);
    }
    return x0 === Infinity ? null : { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  }

  // the viewBox around ``bounds`` with the view's aspect, enlarged at most ZOOM_MAX times, kept
  // inside the drawing (grown by a ring that juts out of it) where that is larger than the view
  function closeUp(g, bounds, viewW, viewH) {
    const pad = Math.max(ZOOM_PAD, 0.05 * Math.max(bounds.w, bounds.h));
    let w = Math.max(bounds.w + 2 * pad, viewW / ZOOM_MAX);
    let h = Math.max(bounds.h + 2 * pad, viewH / ZOOM_MAX);
    if (w / h < viewW / viewH) w = h * (viewW / viewH);
    else h = w / (viewW / viewH);
    const place = (start, size, span, extent) => {
      const from = Math.min(0, start - pad);
      const to = Math.max(extent, start + size + pad);
      const centred = start + size / 2 - span / 2;
      return span >= to - from ? (from + to - span) / 2 : Math.min(Math.max(centred, from), to - span);
    };
    return [place(bounds.x, bounds.w, w, g.width), place(bounds.y, bounds.h, h, g.height), w, h];
  }

  // glide from the view on screen to ``target`` (a new stop's close-up), or jump there
  function moveView(target, animate) {
    if (viewFrame) cancelAnimationFrame(viewFrame);
    viewFrame = null;
    const from = shownView;
    const set = (v) => {
      shownView = v;
      svg.setAttribute("viewBox", v.map((n) => n.toFixed(1)).join(" "));
    };
    if (!animate || !from) return set(target);
    const started = performance.now();
    const tick = (now) => {
      const t = Math.min(1, (now - started) / ZOOM_MS);
      const e = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
      set(from.map((f, i) => f + (target[i] - f) * e));
      viewFrame = t < 1 ? requestAnimationFrame(tick) : null;
    };
    viewFrame = requestAnimationFrame(tick);
  }

  function frameView(animate) {
    const g = lastGeometry;
    if (!g) return;
    const key = (model.get("highlight") || []).join("|");
    if (key !== highlightKey) {
      highlightKey = key;
      wholeChosen = false;
    }
    const bounds = highlightBounds();
    const focus = Boolean(bounds) && !wholeChosen;
    const limit = parseFloat(getComputedStyle(holder).maxHeight);
    const height = focus && Number.isFinite(limit) ? Math.min(g.height, limit - 2) : g.height;
    // a job wider than the canvas scrolls sideways as a whole; its close-up fits the canvas
    const width = focus && holder.clientWidth > 0 ? Math.min(g.width, holder.clientWidth) : g.width;
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    fit.style.display = bounds ? "" : "none";
    fit.textContent = focus ? "\u2922 whole drawing" : "\u2316 zoom to the stop";
    fit.title = focus ? "the canvas shows what this stop points at, enlarged: show all of it" : "zoom and scroll to the ringed items";
    root.dataset.view = focus ? "highlight" : "whole";
    moveView(focus ? closeUp(g, bounds, width, height) : [0, 0, g.width, g.height], animate);
    if (focus) holder.scrollTo({ top: 0, left: 0, behavior: animate ? "smooth" : "auto" });
  }

  function drawBroken(scene) {
    const list = scene.violations || [];
    broken.replaceChildren();
    if (scene.deadlock) {
      const row = document.createElement("div");
      row.className = "flinkstate-deadlock";
      row.style.cssText = "padding:4px 10px;background:#fef2f2;border-left:4px solid #dc2626;border-radius:3px;color:#7f1d1d;margin-bottom:3px;";
      row.innerHTML = `<b>deadlock</b> — ${escapeHtml(scene.deadlock)}`;
      broken.appendChild(row);
    }
    for (const violation of list) {
      const row = document.createElement("div");
      row.style.cssText = "padding:4px 10px;background:#fef2f2;border-left:4px solid #dc2626;border-radius:3px;color:#7f1d1d;margin-bottom:3px;";
      row.innerHTML = `<b>invariant broken</b> — ${escapeHtml(violation)}`;
      broken.appendChild(row);
    }
  }

  function drawCaptions() {
    const list = model.get("captions") || [];
    captions.replaceChildren();
    history.replaceChildren();
    list.forEach(([step, sentence], i) => {
      const row = document.createElement("div");
      row.className = i === 0 ? "flinkstate-caption flinkstate-caption-current" : "flinkstate-caption";
      row.style.cssText = i === 0
        ? "padding:6px 10px;background:#fefce8;border-left:4px solid #facc15;border-radius:3px;color:#111827;"
        : "padding:2px 10px;color:#6b7280;font-size:13px;";
      row.innerHTML = `<b>step ${step}</b> — ${escapeHtml(sentence)}`;
      (i === 0 ? captions : history).appendChild(row);
    });
  }

  function fillZoom(scene) {
    const wanted = [["", "whole job"]];
    for (const e of scene.exchanges || []) wanted.push([`exchange:${e.upstream}\u0000${e.downstream}`, `exchange ${e.upstream} \u2192 ${e.downstream}`]);
    for (const p of scene.places) if (p.kind === "task") wanted.push([`task:${p.task}`, `subtask ${p.label}`]);
    const key = wanted.map((w) => w[0]).join("|");
    if (zoom.dataset.key === key) return;
    const chosen = zoom.value;
    zoom.replaceChildren();
    for (const [value, label] of wanted) {
      const o = document.createElement("option");
      o.value = value;
      o.textContent = label;
      zoom.appendChild(o);
    }
    zoom.dataset.key = key;
    zoom.value = wanted.some((w) => w[0] === chosen) ? chosen : "";
  }

  // the part of the scene the zoom shows: places of the chosen operators, or of the chosen
  // subtask and the subtasks wired to it; the TaskManager band always
  function zoomed(scene) {
    const value = zoom.value;
    if (!value) return scene;
    let keep;
    if (value.startsWith("exchange:")) {
      const [up, down] = value.slice(9).split("\u0000");
      keep = (p) => p.operator === undefined || p.operator === up || p.operator === down;
    } else {
      const task = value.slice(5);
      const mine = new Set(scene.places.filter((p) => p.task === task).map((p) => p.id));
      const taskOf = new Map(scene.places.map((p) => [p.id, p.task]));
      const near = new Set([task]);
      for (const w of scene.wires) {
        if (mine.has(w.from)) near.add(taskOf.get(w.to));
        if (mine.has(w.to)) near.add(taskOf.get(w.from));
      }
      keep = (p) => p.task === undefined || near.has(p.task);
    }
    const places = scene.places.filter(keep);
    const ids = new Set(places.map((p) => p.id));
    return {
      ...scene,
      places,
      items: scene.items.filter((i) => ids.has(i.place)),
      wires: scene.wires.filter((w) => ids.has(w.from) && ids.has(w.to)),
      moves: (scene.moves || []).filter((m) => ids.has(m.from) && ids.has(m.to)),
    };
  }

  function draw(animate) {
    const started = performance.now();
    const full = model.get("scene");
    if (full && full.places) fillZoom(full);
    const scene = full && full.places ? zoomed(full) : full;
    if (!scene || !scene.places) {
      svg.setAttribute("width", 10);
      svg.setAttribute("height", 10);
      return;
    }
    lastScene = scene;
    const width = Math.max(root.clientWidth || holder.clientWidth || 900, 480);
    const g = geometry(scene, width - 2);
    svg.setAttribute("width", g.width);
    svg.setAttribute("height", g.height);
    lastGeometry = g;
    drawBroken(scene);
    const pos = drawPlaces(scene, g);
    drawMoves(scene, pos, animate);
    drawItems(scene, pos, animate);
    lastPos = pos;
    drawHighlights();
    frameView(animate);
    svg.dataset.step = String(scene.step);
    root.dataset.drawMs = (performance.now() - started).toFixed(1); // read by the benchmark
    root.dataset.step = String(scene.step);
  }

  colourBy.addEventListener("change", () => draw(false));
  zoom.addEventListener("change", () => draw(false));
  fit.addEventListener("click", () => {
    wholeChosen = !wholeChosen;
    frameView(true);
  });
  const onScene = () => draw(model.get("animate") !== false);
  const onHighlight = () => {
    drawHighlights();
    frameView(true);
  };
  const onMaxHeight = () => {
    holder.style.maxHeight = model.get("max_height") || "";
    frameView(false);
  };
  const onWindow = () => frameView(false);
  model.on("change:scene", onScene);
  model.on("change:captions", drawCaptions);
  model.on("change:highlight", onHighlight);
  model.on("change:max_height", onMaxHeight);
  window.addEventListener("resize", onWindow);
  let resizeTimer = null;
  const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => draw(false), 60);
  });
  if (observer) observer.observe(root);
  draw(false);
  drawCaptions();
  return () => {
    model.off("change:scene", onScene);
    model.off("change:captions", drawCaptions);
    model.off("change:highlight", onHighlight);
    model.off("change:max_height", onMaxHeight);
    window.removeEventListener("resize", onWindow);
    if (observer) observer.disconnect();
  };
}

export default { render };
