// The Nodescope web view: plain JavaScript, no framework. Everything from the collector is
// shown with textContent, never parsed as HTML.
"use strict";

const ROW = 22;
const MARKS = {
  active: "● active", started: "◐ started", attached: "○ attached", inactive: "○ inactive", ended: "◌ ended",
  detached: "⧗ detached, awaiting release", leaked: "✖ LEAKED", lateRelease: "⚠ released late", unverified: "? unverified",
};
const PLACEHOLDER_MARK = "◌ released (a leaked node remains below)";

const state = {
  process: null,          // the chosen process (pid as text)
  processes: [],
  nodes: new Map(),       // id -> NodeInfo
  children: new Map(),    // id (or 0 for roots) -> [id], attach order
  expanded: new Set(),
  collapsed: new Set(),   // nodes the user collapsed (wins over the default)
  selected: null,
  focus: null,            // id of the focused subtree's root
  search: "",
  rows: [],               // visible rows: [{id, depth}]
  leaks: [],
  source: null,           // the EventSource
  ended: false,
  tab: "tree",
  treeArrived: null,      // the node count of a tree loaded but not yet on screen
};
window.nodescopeTiming = { trees: [] };

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
};

// MARK: Processes

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

async function refreshProcesses() {
  try {
    state.processes = await getJSON("/api/processes");
    setStatus(state.ended ? "process exited" : state.process ? "live" : "collector connected", "live");
  } catch (error) {
    setStatus("collector not answering: " + error.message + " (retrying)", "down");
    return;
  }
  renderProcesses();
  if (state.process) {
    // The list changes when the process's end does (a cut exit flush is one entry); the counts
    // follow the process list.
    const process = state.processes.find((p) => String(p.pid) === state.process);
    if (process && process.end !== state.leaksRenderedForEnd) renderLeaks(); else renderLeakCount();
  }
  if (!state.process) {
    const live = state.processes.filter((p) => p.endedAtNanos === undefined);
    if (live.length === 1) choose(String(live[0].pid));
  }
}

// The verdict counts in the words of `leaks` (Vocabulary.verdictCounts).
function verdictCountsText(counts) {
  let line = `${counts.leaked} leaked, ${counts.unverified} unverified, ${counts.releasedLate} released late`;
  if (counts.retainedByGlobal > 0) {
    line += `, ${counts.retainedByGlobal} retained by ${counts.retainedByGlobal === 1 ? "a global" : "globals"}`;
  }
  return line;
}

// A process's counts in the words of `ps` and `tree` (Vocabulary.nodeCounts).
function countsText(counts) {
  let line = `${counts.attached} attached, ` + verdictCountsText(counts);
  if (counts.awaitingRelease > 0) line += `, ${counts.awaitingRelease} awaiting release`;
  return line;
}

// `exited`, `ended abnormally`… as `ps` says it.
function endText(process) {
  switch (process.end) {
    case undefined: case null: return process.endedAtNanos === undefined ? "" : process.endedNormally ? "exited" : "ended abnormally";
    case "normalExit": return "exited";
    case "exitFlushCut": return "exited, exit flush cut";
    case "agentDisabled": return "agent off";
    default: return "ended abnormally";
  }
}

function renderProcesses() {
  const list = $("process-list");
  list.replaceChildren();
  $("no-process").hidden = state.processes.length > 0;
  for (const process of state.processes) {
    const item = el("li", process.endedAtNanos === undefined ? "" : "ended");
    item.dataset.pid = String(process.pid);
    if (String(process.pid) === state.process) item.classList.add("selected");
    item.append(el("span", "name", `${process.processName} [${process.pid}]`));
    const ended = endText(process);
    const counts = el("span", "counts", countsText(process.counts) + (ended ? " · " + ended : ""));
    counts.dataset.counts = JSON.stringify(process.counts);
    item.append(counts);
    item.addEventListener("click", () => choose(String(process.pid)));
    list.append(item);
  }
}

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = "status " + (kind || "");
}

function showBanner(text) {
  const banner = $("banner");
  banner.textContent = text || "";
  banner.hidden = !text;
}

// MARK: The live tree

function choose(pid) {
  if (replay.info) return; // a recording has its one process
  if (state.process === pid && state.source) return;
  state.process = pid;
  state.selected = null;
  state.focus = null;
  state.expanded.clear();
  state.collapsed.clear();
  renderProcesses();
  connect();
  updateDownloads();
}

function connect() {
  if (state.source) state.source.close();
  state.ended = false;
  showBanner("");
  $("tree-empty").hidden = true;
  const source = new EventSource("/api/events?process=" + encodeURIComponent(state.process));
  state.source = source;
  source.addEventListener("tree", (event) => {
    loadTree(JSON.parse(event.data));
    setStatus("live", "live");
    refreshLeaks();
  });
  source.addEventListener("change", (event) => applyChange(JSON.parse(event.data)));
  source.addEventListener("gone", (event) => {
    const body = JSON.parse(event.data);
    showBanner(body.kind === "notFound" ? "That process is gone: " + body.error : "The collector went away; reconnecting…");
  });
  source.onerror = () => {
    if (state.ended) { source.close(); return; }
    if (source.readyState === EventSource.CLOSED) {
      // Refused (503: too many live views open at once): the browser does not retry by itself.
      setStatus("the web view serves its limit of live views; retrying in 10 s", "down");
      setTimeout(() => { if (state.source === source) connect(); }, 10000);
      return;
    }
    setStatus("collector not answering (reconnecting)", "down");
  };
}

function loadTree(view) {
  state.nodes.clear();
  state.children.clear();
  for (const node of view.nodes) addNode(node);
  const small = view.nodes.length <= 2000;
  for (const node of view.nodes) if (small || node.depth < 2) state.expanded.add(node.id);
  state.treeArrived = view.nodes.length;
  scheduleRender();
}

function addNode(node) {
  const existing = state.nodes.get(node.id);
  state.nodes.set(node.id, node);
  if (existing) return;
  const parent = node.parent !== undefined && state.nodes.has(node.parent) ? node.parent : 0;
  if (!state.children.has(parent)) state.children.set(parent, []);
  state.children.get(parent).push(node.id);
}

function removeNode(id) {
  const node = state.nodes.get(id);
  if (!node) return;
  for (const child of state.children.get(id) || []) removeNode(child);
  state.children.delete(id);
  const parent = node.parent !== undefined && state.nodes.has(node.parent) ? node.parent : 0;
  const siblings = state.children.get(parent);
  if (siblings) siblings.splice(siblings.indexOf(id), 1);
  state.nodes.delete(id);
}

function applyChange(change) {
  const [name] = Object.keys(change);
  const body = change[name];
  switch (name) {
    case "attached": addNode(body._0); break;
    case "statusChanged": { const node = state.nodes.get(body.id); if (node) node.status = body.status; break; }
    case "objectAdded": { const node = state.nodes.get(body.id); if (node) node.objects.push(body.object); break; }
    case "objectReleased": {
      const node = state.nodes.get(body.id);
      const object = node && node.objects.find((o) => o.index === body.index);
      if (object) object.isAlive = false;
      break;
    }
    case "removed": removeNode(body.id); break;
    case "resynced": state.nodes.clear(); state.children.clear(); break;
    case "leakFlagged": refreshLeaks(); break;
    case "retainersFound": {
      const node = state.nodes.get(body.id);
      if (node) node.retainers = (node.retainers || []).filter((p) => p.objectIndex !== body.path.objectIndex).concat([body.path]);
      refreshLeaks();
      break;
    }
    case "sessionEnded":
      state.ended = true;
      showBanner(body.normally ? "The process exited. Its last tree and leaks stay here." : "The process ended abnormally. Its last tree and leaks stay here.");
      setStatus("process exited", "");
      refreshProcesses();
      break;
  }
  if (state.selected !== null && state.nodes.has(state.selected)) renderDetails();
  scheduleRender();
}

// MARK: Rows, rendered only where the user looks

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    computeRows();
    renderRows();
    if (state.treeArrived !== null) {
      // When each tree was first on screen, in ms since the page began to load (for the tests
      // and docs/BENCHMARKS.md; nothing else reads it).
      window.nodescopeTiming.trees.push({ nodes: state.treeArrived, shownAt: performance.now() });
      state.treeArrived = null;
    }
  });
}

function isExpanded(id) {
  return !state.collapsed.has(id) && state.expanded.has(id);
}

function pathOf(id) {
  const names = [];
  for (let node = state.nodes.get(id); node; node = state.nodes.get(node.parent)) names.unshift(displayName(node));
  return names.join("/");
}

function displayName(node) {
  return node.name || node.kind || "?";
}

function computeRows() {
  const rows = [];
  const query = state.search.toLowerCase();
  const start = state.focus !== null && state.nodes.has(state.focus) ? [state.focus] : state.children.get(0) || [];
  if (query) {
    // Every node whose name or path matches, with its ancestors, all open.
    const keep = new Set();
    for (const [id, node] of state.nodes) {
      if (displayName(node).toLowerCase().includes(query) || pathOf(id).toLowerCase().includes(query)) {
        for (let current = node; current; current = state.nodes.get(current.parent)) keep.add(current.id);
      }
    }
    const walk = (ids, depth) => {
      for (const id of ids) {
        if (!keep.has(id)) continue;
        rows.push({ id, depth, match: displayName(state.nodes.get(id)).toLowerCase().includes(query) });
        walk(state.children.get(id) || [], depth + 1);
      }
    };
    walk(start, 0);
  } else {
    const stack = start.slice().reverse().map((id) => [id, 0]);
    while (stack.length) {
      const [id, depth] = stack.pop();
      rows.push({ id, depth });
      if (!isExpanded(id)) continue;
      const kids = state.children.get(id) || [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], depth + 1]);
    }
  }
  state.rows = rows;
}

function renderRows() {
  const view = $("tree-view");
  const spacer = $("tree-spacer");
  spacer.style.height = state.rows.length * ROW + "px";
  const first = Math.max(0, Math.floor(view.scrollTop / ROW) - 10);
  const last = Math.min(state.rows.length, first + Math.ceil(view.clientHeight / ROW) + 20);
  const fragment = document.createDocumentFragment();
  for (let index = first; index < last; index++) fragment.append(renderRow(state.rows[index], index));
  spacer.replaceChildren(fragment);
  $("tree-empty").hidden = state.process !== null;
}

function renderRow(row, index) {
  const node = state.nodes.get(row.id);
  const line = el("div", "row");
  line.style.top = index * ROW + "px";
  line.style.paddingLeft = 6 + row.depth * 16 + "px";
  line.dataset.id = String(row.id);
  line.dataset.path = pathOf(row.id);
  if (row.id === state.selected) line.classList.add("selected");
  if (row.match) line.classList.add("match");
  const kids = state.children.get(row.id) || [];
  const toggle = el("span", "toggle", kids.length ? (isExpanded(row.id) || state.search ? "▾" : "▸") : "");
  toggle.addEventListener("click", (event) => { event.stopPropagation(); toggleNode(row.id); });
  line.append(toggle, el("span", "name", displayName(node)));
  if (node.name && node.kind) line.append(el("span", "kind", node.kind));
  const status = node.isPlaceholder ? "placeholder" : node.status;
  line.append(el("span", "mark s-" + status, node.isPlaceholder ? PLACEHOLDER_MARK : MARKS[node.status] || node.status));
  const alive = node.objects.filter((o) => o.isAlive).map((o) => o.role || "object");
  if (alive.length && !node.isPlaceholder) line.append(el("span", "objects", "[" + alive.join(", ") + "]"));
  const key = (node.retainers || []).map(keyHop).find(Boolean);
  if (key && node.status !== "lateRelease") line.append(el("span", "held", "◀ held by " + key));
  line.addEventListener("click", () => select(row.id));
  return line;
}

function toggleNode(id) {
  if (isExpanded(id)) { state.collapsed.add(id); } else { state.collapsed.delete(id); state.expanded.add(id); }
  scheduleRender();
}

function reveal(id) {
  for (let node = state.nodes.get(state.nodes.get(id)?.parent); node; node = state.nodes.get(node.parent)) {
    state.collapsed.delete(node.id);
    state.expanded.add(node.id);
  }
  if (state.focus !== null && !pathOf(id).startsWith(pathOf(state.focus))) state.focus = null;
  state.search = "";
  $("search").value = "";
  selectTab("tree");
  computeRows();
  const index = state.rows.findIndex((row) => row.id === id);
  const view = $("tree-view");
  if (index >= 0) view.scrollTop = Math.max(0, index * ROW - view.clientHeight / 2);
  select(id);
}

function select(id) {
  state.selected = id;
  renderDetails();
  scheduleRender();
}

// MARK: Details and leaks

function keyHop(path) {
  const hops = path.hops || [];
  const hop = hops.find((h) => h.isSuspect) || hops[0];
  if (path.verdict === "global") return "global " + (hops[0] ? hops[0].holder : "?");
  if (!hop) return null;
  return hop.reference.startsWith(".") || hop.reference.startsWith("[") ? hop.holder + hop.reference : hop.holder;
}

// A closure as the reports name it: `closure #1 in X.f() (File.swift:20)`; null when the tools
// could not name it (ClosureNaming).
function closureName(closure) {
  if (!closure || !closure.symbol) return null;
  return closure.symbol + (closure.file && closure.line ? " (" + closure.file.split("/").pop() + ":" + closure.line + ")" : "");
}

// The closure that the suspect reference keeps (RetainerPath.suspectClosure): the first named one
// at or after the suspect, else the one whose context a suspect capture belongs to.
function suspectClosure(path) {
  const hops = path.hops || [];
  const suspect = hops.findIndex((h) => h.isSuspect);
  if (suspect < 0) return null;
  for (let index = suspect; index < hops.length; index++) {
    if (hops[index].closure && hops[index].closure.symbol) return hops[index].closure;
  }
  if (hops[suspect].holderKind !== "closureContext") return null;
  const before = suspect > 0 ? suspect - 1 : (path.verdict === "cycle" ? hops.length - 1 : -1);
  const closure = before >= 0 ? hops[before].closure : null;
  return closure && closure.symbol ? closure : null;
}

function retainerText(path, objectType) {
  const hops = path.hops || [];
  if (path.verdict === "notAnalyzed") return "not analyzed: " + (path.note || "no reason given");
  if (path.verdict === "unknown") return "holder unknown";
  if (path.verdict === "global") return "retained by global " + (hops[0] ? hops[0].holder : "?");
  if (!hops.length) return path.verdict === "stack" ? "held by a thread's stack" : path.verdict;
  const lines = [(path.verdict === "cycle" ? "retain cycle from " : "held by ") + hops[0].holder];
  hops.forEach((hop, index) => {
    let next = index + 1 < hops.length ? hops[index + 1].holder : objectType;
    let reference = hop.reference || "(itself)";
    const name = closureName(hop.closure);
    // The closure's context is the next holder, or the object itself for a closure that
    // captures one object only.
    if (name && index + 1 < hops.length && hops[index + 1].holderKind === "closureContext") next = name;
    else if (name) reference += ": " + name;
    lines.push("  ─ " + reference + " ─▶ " + next + (hop.isSuspect ? "  ◀ suspect" : ""));
  });
  const closure = suspectClosure(path);
  if (closure && closure.file && closure.line) {
    lines.push("change " + closure.file.split("/").pop() + ":" + closure.line + "  (" + closure.symbol + ")");
  }
  if (path.cutShort) lines.push("cut short" + (path.note ? ": " + path.note : ""));
  return lines.join("\n");
}

// `350 ms`, `2.7 s`, `12 min`, as the reports write durations (Vocabulary.duration).
function duration(nanos) {
  const value = Math.max(0, nanos) / 1e9;
  if (value < 1) return Math.round(value * 1000) + " ms";
  if (value < 120) return value.toFixed(1) + " s";
  return Math.round(value / 60) + " min";
}

function renderDetails() {
  const body = $("detail-body");
  const node = state.nodes.get(state.selected);
  body.replaceChildren();
  body.className = "";
  if (!node) { body.className = "empty"; body.textContent = "Click a node to see its objects."; return; }
  body.append(el("div", "path", pathOf(node.id)));
  const process = state.processes.find((p) => String(p.pid) === state.process);
  // Times on the collector's clock, shown from the process's start (or its connection, when the
  // collector cannot see the start).
  const origin = process ? (process.startedAtNanos !== undefined ? process.startedAtNanos : process.connectedAtNanos) : undefined;
  const originWord = process && process.startedAtNanos !== undefined ? "started" : "connected";
  const since = (t) => {
    if (origin === undefined || t === undefined) return "?";
    return duration(t - origin) + " after the process " + originWord;
  };
  const table = el("table");
  const add = (label, value) => { const tr = el("tr"); tr.append(el("td", "meta", label), el("td", "", value)); table.append(tr); };
  add("kind", node.kind || "?");
  add("state", node.isPlaceholder ? PLACEHOLDER_MARK : MARKS[node.status] || node.status);
  add("id", String(node.id));
  add("attached", since(node.attachedAtNanos));
  if (node.attachSite) {
    // The file's name and line, as the reports write it; the whole path on hover.
    const site = el("td", "site", node.attachSite.file.split("/").pop() + ":" + node.attachSite.line);
    site.title = node.attachSite.file + ":" + node.attachSite.line;
    const row = el("tr");
    row.append(el("td", "meta", "attached at"), site);
    table.append(row);
  }
  if (node.test) add("test", (node.test.suite ? node.test.suite + "." : "") + node.test.name);
  if (node.detachedAtNanos !== undefined) add("detached", since(node.detachedAtNanos));
  for (const object of node.objects) {
    add((object.role || "object") + " " + object.index, object.typeName + (object.isAlive ? " (alive)" : " (released)"));
  }
  body.append(table);
  for (const path of node.retainers || []) {
    const object = node.objects.find((o) => o.index === path.objectIndex);
    body.append(el("pre", "retainers", retainerText(path, object ? object.typeName : "?")));
  }
  const focus = el("button", "", "Focus on this subtree");
  focus.addEventListener("click", () => { state.focus = node.id; state.expanded.add(node.id); updateFocus(); scheduleRender(); });
  body.append(focus);
}

async function refreshLeaks() {
  if (!state.process) return;
  try {
    state.leaks = await getJSON("/api/leaks?process=" + encodeURIComponent(state.process));
  } catch (error) {
    return;
  }
  renderLeaks();
}

function renderLeakCount() {
  const process = state.processes.find((p) => String(p.pid) === state.process);
  $("leak-count").textContent = process && process.counts ? "(" + verdictCountsText(process.counts) + ")" : "";
}

function renderLeaks() {
  const list = $("leak-list");
  list.replaceChildren();
  const process = state.processes.find((p) => String(p.pid) === state.process);
  // The counts of `ps` and `leaks`; the unverified nodes of a cut exit flush are one entry.
  const cut = process && process.end === "exitFlushCut";
  const shown = state.leaks.filter((leak) => !(cut && leak.verdict === "unverified"));
  const cutCount = state.leaks.length - shown.length;
  state.leaksRenderedForEnd = process ? process.end : undefined;
  renderLeakCount();
  if (!state.leaks.length) list.append(el("li", "empty", "No leak."));
  if (cutCount > 0) {
    const item = el("li", "flush-cut");
    item.append(el("div", "path", process.processName + " [" + process.pid + "]: exit flush cut"));
    item.append(el("div", "meta", `${cutCount === 1 ? "1 node is" : cutCount + " nodes are"} unverified: the process's exit flush ran out of time `
      + "before everything it had queued was written (raise NODESCOPE_EXIT_FLUSH=SECONDS, or run it under `nodescope check`, which holds the exit)"));
    list.append(item);
  }
  for (const leak of shown) {
    const item = el("li");
    item.dataset.node = String(leak.nodeID);
    item.append(el("div", "path", leak.path.join(" › ") + "  (" + leak.kind + ")"));
    item.append(el("div", "meta", leak.verdict + " · " + leak.aliveObjects.map((o) => (o.role || "object") + " " + o.typeName).join(", ")
      + " · flagged " + duration(leak.flaggedAtNanos - leak.detachedAtNanos) + " after detach"));
    for (const path of leak.retainers || []) {
      const object = leak.aliveObjects.find((o) => o.index === path.objectIndex);
      item.append(el("pre", "retainers", retainerText(path, object ? object.typeName : "?")));
    }
    item.append(el("div", "fingerprint", "fingerprint " + leak.fingerprint));
    item.addEventListener("click", () => reveal(leak.nodeID));
    list.append(item);
  }
}

// MARK: Focus, tabs, downloads

function updateFocus() {
  const focus = $("focus");
  focus.replaceChildren();
  if (state.focus !== null && state.nodes.has(state.focus)) {
    focus.append(el("span", "meta", "focus: " + pathOf(state.focus)));
    const clear = el("button", "", "×");
    clear.title = "Show the whole tree";
    clear.addEventListener("click", () => { state.focus = null; updateFocus(); scheduleRender(); });
    focus.append(clear);
  }
  updateDownloads();
}

function diagramURL(format, download) {
  const root = state.focus !== null && state.nodes.has(state.focus) ? pathOf(state.focus) : "";
  return "/api/diagram?process=" + encodeURIComponent(state.process) + "&root=" + encodeURIComponent(root)
    + "&format=" + format + (download ? "&download=1" : "") + atParameter();
}

// "&at=…" of the instant shown, when the page shows a recording.
function atParameter() {
  return replay.info && replay.reached ? "&at=" + encodeURIComponent(replay.reached.requested) : "";
}

function updateDownloads() {
  if (!state.process) return;
  $("download-svg").href = diagramURL("svg", true);
  $("download-dot").href = diagramURL("dot", true);
  $("download-json").href = "/api/tree?process=" + encodeURIComponent(state.process) + "&download=1" + atParameter();
  if (state.tab === "diagram") $("diagram").src = diagramURL("svg", false);
}

// The diagram's zoom: null fits it to the pane's width, a number is a scale of its own size.
function setZoom(zoom) {
  const image = $("diagram");
  state.zoom = zoom;
  image.classList.toggle("fit", zoom === null);
  image.style.width = zoom === null || !image.naturalWidth ? "" : Math.round(image.naturalWidth * zoom) + "px";
  $("zoom-level").textContent = zoom === null ? "fit" : Math.round(zoom * 100) + "%";
}

// The scale the diagram is shown at now (its fitted scale when fitted).
function currentZoom() {
  const image = $("diagram");
  if (state.zoom !== null && state.zoom !== undefined) return state.zoom;
  return image.naturalWidth ? image.clientWidth / image.naturalWidth : 1;
}

function selectTab(tab) {
  state.tab = tab;
  $("tab-tree").setAttribute("aria-selected", String(tab === "tree"));
  $("tab-diagram").setAttribute("aria-selected", String(tab === "diagram"));
  $("tree-view").hidden = tab !== "tree";
  $("diagram-view").hidden = tab !== "diagram";
  updateDownloads();
}

// MARK: A recording at an instant (nodescope ui --from FILE)

const replay = {
  info: null,       // the recording: file, process, records, durationSeconds, startWallNanos, end, warnings
  reached: null,    // the instant shown: requested, event, seconds, ended, warnings
  wanted: null,     // the instant to ask for once the answer on its way has come
  busy: false,
  playing: false,
  playFrom: 0,      // seconds of the recording where playing (re)started …
  playStart: 0,     // … and when, in ms of performance.now()
};

function startRecording(info) {
  replay.info = info;
  $("timeline").hidden = false;
  $("scrubber").max = String(Math.max(0, Math.round(info.durationSeconds * 1000)));
  $("scale-end").textContent = formatSeconds(info.durationSeconds);
  const ends = { normal: "exited", abnormal: "ended abnormally", stopped: "recording stopped", cut: "cut off" };
  setStatus(`recording ${info.file} · ${info.records.toLocaleString("en")} records · ${ends[info.end] || info.end}`, "recorded");
  if (info.warnings.length) showBanner(info.warnings.join(" "));
  $("scrubber").addEventListener("input", () => {
    stopPlaying();
    seek(String(Number($("scrubber").value) / 1000));
  });
  $("step-back").addEventListener("click", () => { stopPlaying(); step(-1); });
  $("step-forward").addEventListener("click", () => { stopPlaying(); step(1); });
  $("play").addEventListener("click", () => (replay.playing ? stopPlaying() : startPlaying()));
  $("speed").addEventListener("change", () => { replay.playFrom = shownSeconds(); replay.playStart = performance.now(); });
  document.addEventListener("keydown", (event) => {
    if (event.target.id === "search" || event.target.tagName === "SELECT" || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === " " && event.target.tagName !== "BUTTON") {
      event.preventDefault();
      replay.playing ? stopPlaying() : startPlaying();
    } else if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
      event.preventDefault();
      stopPlaying();
      step(event.key === "ArrowLeft" ? -1 : 1);
    }
  });
  seek(new URLSearchParams(location.search).get("at") || "end");
}

// Asks for an instant; while an answer is on its way, only the latest instant asked for is kept
// (a slider dragged fast, or playing, skips instants rather than queueing them).
function seek(at) {
  replay.wanted = at;
  if (!replay.busy) fetchInstant();
}

async function fetchInstant() {
  const at = replay.wanted;
  replay.wanted = null;
  replay.busy = true;
  try {
    showInstant(await getJSON("/api/instant?at=" + encodeURIComponent(at)));
  } catch (error) {
    stopPlaying();
    showBanner("Cannot show that instant: " + error.message);
  }
  replay.busy = false;
  if (replay.wanted !== null) fetchInstant();
}

function showInstant(body) {
  const instant = body.instant;
  replay.reached = instant;
  state.processes = body.process ? [body.process] : [];
  state.process = String(body.process ? body.process.pid : replay.info.pid);
  renderProcesses();
  if (body.tree) {
    loadTree(body.tree);
  } else {
    state.nodes.clear();
    state.children.clear();
    scheduleRender();
  }
  state.leaks = body.leaks;
  renderLeaks();
  if (state.selected !== null) renderDetails();
  if (replay.wanted === null) $("scrubber").value = String(Math.round(shownSeconds() * 1000));
  $("instant-time").textContent = formatSeconds(shownSeconds(), 3) + " / " + formatSeconds(replay.info.durationSeconds);
  $("instant-event").textContent = `record ${instant.event.toLocaleString("en")} of ${replay.info.records.toLocaleString("en")}`
    + (instant.ended ? " · ended" : "");
  const wall = new Date((replay.info.startWallNanos + instant.seconds * 1e9) / 1e6);
  $("instant-wall").textContent = wall.toISOString().replace("T", " ").replace("Z", " UTC");
  const extra = instant.warnings.filter((w) => !replay.info.warnings.includes(w));
  showBanner(replay.info.warnings.concat(extra).join(" "));
  const params = new URLSearchParams(location.search);
  params.set("at", instant.requested);
  history.replaceState(null, "", "?" + params.toString());
  updateDownloads();
  // What the page shows, for the tests (nothing else reads it).
  window.nodescopeInstant = instant;
}

// Seconds of the instant shown: the one asked for when it was a time, else where the replay stopped.
function shownSeconds() {
  if (!replay.reached) return 0;
  const asked = /^([0-9]+(?:\.[0-9]+)?)(ms|s)?$/.exec(replay.reached.requested);
  if (asked) return Math.min(Number(asked[1]) / (asked[2] === "ms" ? 1000 : 1), replay.info.durationSeconds);
  return replay.reached.seconds;
}

function step(delta) {
  const event = replay.reached ? replay.reached.event : 0;
  seek("event:" + Math.max(0, Math.min(replay.info.records, event + delta)));
}

function startPlaying() {
  let from = shownSeconds();
  if (from >= replay.info.durationSeconds) from = 0;
  replay.playing = true;
  replay.playFrom = from;
  replay.playStart = performance.now();
  $("play").textContent = "❚❚";
  $("play").classList.add("playing");
  $("play").setAttribute("aria-label", "Pause");
  tick();
}

function stopPlaying() {
  if (!replay.playing) return;
  replay.playing = false;
  $("play").textContent = "▶";
  $("play").classList.remove("playing");
  $("play").setAttribute("aria-label", "Play");
}

function tick() {
  if (!replay.playing) return;
  const speed = Number($("speed").value);
  const seconds = Math.min(replay.info.durationSeconds, replay.playFrom + ((performance.now() - replay.playStart) / 1000) * speed);
  seek(String(Math.round(seconds * 1000) / 1000));
  if (seconds >= replay.info.durationSeconds) { stopPlaying(); return; }
  setTimeout(tick, 100);
}

function formatSeconds(value, digits) {
  if (digits === undefined) digits = value < 10 ? 1 : 0;
  return value.toFixed(digits) + " s";
}

// MARK: Start

async function start() {
  $("tab-tree").addEventListener("click", () => selectTab("tree"));
  $("tab-diagram").addEventListener("click", () => selectTab("diagram"));
  state.zoom = null;
  $("zoom-fit").addEventListener("click", () => setZoom(null));
  $("zoom-actual").addEventListener("click", () => setZoom(1));
  $("zoom-in").addEventListener("click", () => setZoom(Math.min(8, currentZoom() * 1.25)));
  $("zoom-out").addEventListener("click", () => setZoom(Math.max(0.05, currentZoom() / 1.25)));
  $("diagram").addEventListener("load", () => setZoom(state.zoom === undefined ? null : state.zoom));
  $("tree-view").addEventListener("scroll", () => renderRows());
  window.addEventListener("resize", () => renderRows());
  $("expand-all").addEventListener("click", () => {
    state.collapsed.clear();
    for (const id of state.nodes.keys()) state.expanded.add(id);
    scheduleRender();
  });
  $("collapse-all").addEventListener("click", () => {
    state.expanded.clear();
    state.collapsed.clear();
    scheduleRender();
  });
  $("search").addEventListener("input", (event) => { state.search = event.target.value.trim(); scheduleRender(); });
  let info = {};
  try {
    info = await getJSON("/api/info");
    $("start-line").textContent = info.startLine || "";
  } catch (error) { /* the process list says what is wrong */ }
  if (info.recording) {
    startRecording(info.recording);
    renderRows();
    return;
  }
  // A link may name the process: /?process=PID (or a name the collector knows).
  const wanted = new URLSearchParams(location.search).get("process");
  if (wanted) choose(wanted);
  await refreshProcesses();
  setInterval(refreshProcesses, 2000);
  renderRows();
}

start();
