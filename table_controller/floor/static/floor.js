// stud-table floor dashboard: drawn here from the service's SSE stream (the whole view
// once, then what changed); nothing is loaded from outside the machine (no font,
// library, sound file or image).
"use strict";

const $ = (sel) => document.querySelector(sel);
const SEVERITIES = ["critical", "error", "warning"];
let view = null;            // {tables, alerts, connected, refused, ignored}, kept up to date
let cards = new Map();      // table id -> its card (from view and tables events)
let openBy = new Map();     // table id -> its open alerts (from view and alerts events)
let known = null;           // alert ids already seen (null until the first view)
let fresh = [];             // alerts new since the last drawing (their rows flash)
let drawing = false;        // a drawing is scheduled
let audio = null;           // AudioContext, made on the first click (browser rule)
window.floorBeeps = 0;      // how many cues the page sounded (the tests read it)

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node[k] = v;
  }
  for (const c of children) {
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function age(ts) {
  if (ts === null || ts === undefined) return "?";
  const s = Math.max(0, Math.round(Date.now() / 1000 - ts));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

function clock(ts) {
  if (ts === null || ts === undefined) return "";
  return new Date(ts * 1000).toLocaleString([], {dateStyle: "short", timeStyle: "short"});
}

function ordinal(n) {
  return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th");
}

function dealerText(d) {
  return d ? (d.name || "") + " (" + d.id + ")" : "—";
}

// ------------------------------------------------------------------ sound

function beep(severity) {
  window.floorBeeps += 1;
  if (!audio || audio.state !== "running") return;
  // Generated here: two short tones, lower and longer for the more severe alerts.
  const tones = severity === "critical" ? [440, 330, 440] : severity === "error" ? [660, 520] : [880];
  let t = audio.currentTime;
  for (const f of tones) {
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = f;
    osc.type = "square";
    gain.gain.setValueAtTime(0.08, t);
    gain.gain.exponentialRampToValueAtTime(0.001, t + 0.18);
    osc.connect(gain).connect(audio.destination);
    osc.start(t);
    osc.stop(t + 0.2);
    t += 0.22;
  }
}

function soundLabel() {
  const on = audio && audio.state === "running";
  $("#sound").textContent = on ? "Sound: on" : "Sound: off (click)";
  $("#sound").classList.toggle("bad", !on);
}

$("#sound").addEventListener("click", () => {
  if (!audio) audio = new AudioContext();
  audio.resume().then(soundLabel);
});
document.addEventListener("click", () => {  // any click may start the sound
  if (!audio) { audio = new AudioContext(); audio.resume().then(soundLabel); }
}, {once: true});

// ------------------------------------------------------------------ commands

async function send(name, body) {
  const resp = await fetch("/api/cmd/" + name, {
    method: "POST", headers: {"Content-Type": "application/json", "X-Stud-Table": "1"},
    body: JSON.stringify(body)});
  let reply;
  try { reply = await resp.json(); } catch (e) { reply = {accepted: false, reason: resp.statusText}; }
  return reply;
}

function toast(text, bad) {
  const t = $("#toast");
  t.textContent = text;
  t.className = bad ? "bad" : "";
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 6000);
}

function said(reply, what) {
  if (reply.accepted) toast(what + ": done");
  else toast(what + " refused (" + (reply.code || "?") + "): " + (reply.reason || ""), true);
  return reply.accepted;
}

async function ack(alert) {
  said(await send("ack", {table: alert.table, alert: alert.id}), "Acknowledge " + alert.code);
}

function resolve(alert) {
  const dialog = $("#resolve-dialog");
  $("#resolve-what").textContent = alert.code + " at " + alert.table;
  $("#resolve-note").value = "";
  $("#resolve-problem").textContent = "";
  dialog.dataset.table = alert.table;
  dialog.dataset.alert = alert.id;
  dialog.showModal();
}

$("#resolve-form").addEventListener("submit", async (ev) => {
  const dialog = $("#resolve-dialog");
  if (ev.submitter && ev.submitter.value === "cancel") return;
  ev.preventDefault();
  const note = $("#resolve-note").value.trim();
  if (!note) { $("#resolve-problem").textContent = "Say what was done."; return; }
  const reply = await send("resolve", {table: dialog.dataset.table, alert: dialog.dataset.alert, note});
  if (said(reply, "Resolve")) dialog.close();
  else $("#resolve-problem").textContent = reply.reason || "refused";
});

function signIn(table) {
  const dialog = $("#dealer-dialog");
  $("#dealer-table").textContent = table;
  $("#dealer-problem").textContent = "";
  dialog.dataset.table = table;
  dialog.showModal();
}

$("#dealer-form").addEventListener("submit", async (ev) => {
  const dialog = $("#dealer-dialog");
  if (ev.submitter && ev.submitter.value === "cancel") return;
  ev.preventDefault();
  const reply = await send("dealer", {table: dialog.dataset.table, action: "in",
    id: $("#dealer-id").value.trim(), name: $("#dealer-name").value.trim()});
  if (said(reply, "Dealer sign-in")) dialog.close();
  else $("#dealer-problem").textContent = reply.reason || "refused";
});

async function signOut(table) {
  said(await send("dealer", {table, action: "out"}), "Dealer sign-out at " + table);
}

// ------------------------------------------------------------------ live view

function drawAlerts(alerts) {
  const body = $("#alerts tbody");
  body.replaceChildren();
  for (const a of alerts) {
    const row = el("tr", {class: "alert sev-" + a.severity + (a.state === "acknowledged" ? " acked" : ""),
                          "data-id": a.id, "data-table": a.table, "data-severity": a.severity,
                          "data-state": a.state},
      el("td", {}, el("span", {class: "sev"}, a.severity)),
      el("td", {class: "tbl"}, a.table),
      el("td", {class: "age", "data-ts": a.raised_ts ?? ""}, age(a.raised_ts)),
      el("td", {}, el("b", {}, a.code), el("div", {class: "msg"}, a.message)),
      el("td", {}, a.hand ?? "—"),
      el("td", {}, dealerText(a.dealer)),
      el("td", {class: "state"}, a.state === "acknowledged"
        ? "ack " + (a.acknowledged_by || "") + (a.acknowledged_ts ? " · " + age(a.acknowledged_ts) + " ago" : "")
        : "OPEN"),
      el("td", {class: "acts"},
        a.state === "open" ? el("button", {class: "ack", onclick: () => ack(a)}, "Acknowledge") : null,
        el("button", {class: "resolve", onclick: () => resolve(a)}, "Resolve…")));
    body.append(row);
  }
  $("#no-alerts").hidden = alerts.length > 0;
  const counts = SEVERITIES.map((s) => [s, alerts.filter((a) => a.severity === s).length]);
  $("#alert-count").replaceChildren(...counts.filter(([, n]) => n).map(
    ([s, n]) => el("span", {class: "count sev-" + s}, n + " " + s)));
}

function drawTables(tables) {
  const box = $("#tables");
  box.replaceChildren();
  for (const t of tables) {
    const readers = el("div", {class: "readers"}, ...t.readers.map((r) =>
      el("span", {class: "reader " + (r.state === "online" ? "ok" : "bad"), title: r.reader + ": " + r.state,
                  "data-reader": r.reader, "data-state": r.state}, r.reader + " " + r.state)));
    const worst = (openBy.get(t.table) || [])
      .map((a) => SEVERITIES.indexOf(a.severity)).filter((i) => i >= 0).sort()[0];
    const card = el("article", {class: "table st-" + (t.status || "unknown") +
                                  (worst !== undefined ? " has-" + SEVERITIES[worst] : ""),
                                "data-table": t.table, "data-status": t.status || ""},
      el("h3", {}, t.table, el("span", {class: "status"}, t.status || "no status")),
      t.status_reason ? el("div", {class: "reason"}, t.status_reason) : null,
      el("dl", {},
        el("dt", {}, "Game"), el("dd", {}, t.game || "—"),
        el("dt", {}, "Hand"), el("dd", {class: "hand"}, t.hand === null ? "between hands"
          : "#" + t.hand + (t.street ? " · " + ordinal(t.street) + " street" : "") + " · " + t.players + " in"),
        el("dt", {}, "Pot"), el("dd", {}, t.pot ?? "—"),
        el("dt", {}, "Dealer"), el("dd", {class: "dealer"}, dealerText(t.dealer)),
        el("dt", {}, "Alerts"), el("dd", {class: "open"}, t.open_alerts ? t.open_alerts + " open" : "none")),
      readers,
      el("div", {class: "acts"},
        el("button", {onclick: () => signIn(t.table)}, t.dealer ? "Change dealer…" : "Dealer sign-in…"),
        t.dealer ? el("button", {onclick: () => signOut(t.table)}, "Sign out") : null));
    box.append(card);
  }
  $("#table-count").textContent = "(" + tables.length + ")";
}

function draw() {
  if (!view) return;
  drawAlerts(view.alerts);
  drawTables(view.tables);
  const down = view.tables.filter((t) => t.status !== "online").length;
  $("#summary").textContent = view.tables.length + " tables · " + view.alerts.length +
    " open alerts" + (down ? " · " + down + " not online" : "") +
    (view.refused ? " · " + view.refused + " bad messages refused" : "") +
    (view.ignored ? " · " + view.ignored + " messages of tables past the limit ignored" : "");
  $("#conn").textContent = view.connected ? "broker connected" : "broker LOST";
  $("#conn").className = view.connected ? "ok" : "bad";
  document.title = (view.alerts.length ? "(" + view.alerts.length + ") " : "") + "stud-table floor";
}

// Most severe first, then the oldest, then by table and id: the service's order.
function alertOrder(x, y) {
  const rank = (a) => { const i = SEVERITIES.indexOf(a.severity); return i < 0 ? SEVERITIES.length : i; };
  const ts = (a) => (typeof a.raised_ts === "number" ? a.raised_ts : Infinity);
  return rank(x) - rank(y) || (ts(x) < ts(y) ? -1 : ts(x) > ts(y) ? 1 : 0) ||
    (x.table < y.table ? -1 : x.table > y.table ? 1 : 0) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}

function alertsChanged() {
  const all = [];
  for (const list of openBy.values()) all.push(...list);
  all.sort(alertOrder);
  const now = [];
  if (known !== null) for (const a of all) if (!known.has(a.id)) now.push(a);
  known = new Set(all.map((a) => a.id));
  view.alerts = all;
  if (now.length) {
    now.sort((x, y) => SEVERITIES.indexOf(x.severity) - SEVERITIES.indexOf(y.severity));
    beep(now[0].severity);
    fresh.push(...now);
  }
}

// Events that arrive together are drawn once (a busy room sends many a second).
function schedule() {
  if (drawing) return;
  drawing = true;
  setTimeout(() => {
    drawing = false;
    view.tables = [...cards.values()].sort((x, y) => (x.table < y.table ? -1 : x.table > y.table ? 1 : 0));
    draw();
    for (const a of fresh) {
      const row = document.querySelector('#alerts tr[data-id="' + CSS.escape(a.id) + '"]');
      if (row) row.classList.add("new");
    }
    fresh = [];
  }, 0);
}

function onView(next) {  // the whole view: on (re)connecting
  cards = new Map(next.tables.map((t) => [t.table, t]));
  openBy = new Map();
  for (const a of next.alerts) {
    if (!openBy.has(a.table)) openBy.set(a.table, []);
    openBy.get(a.table).push(a);
  }
  view = next;
  alertsChanged();
  schedule();
}

function onAlerts(delta) {  // each listed table's open alerts now
  if (!view) return;
  for (const [table, list] of Object.entries(delta.open)) {
    if (list.length) openBy.set(table, list); else openBy.delete(table);
    // The card's count follows the alerts at once, not with the next tables event.
    const card = cards.get(table);
    if (card) cards.set(table, {...card, open_alerts: list.length});
  }
  alertsChanged();
  schedule();
}

function onTables(delta) {  // the cards that changed, and the page-wide figures
  if (!view) return;
  for (const t of delta.tables) cards.set(t.table, t);
  view.connected = delta.connected;
  view.refused = delta.refused;
  view.ignored = delta.ignored;
  schedule();
}

function connect() {
  const source = new EventSource("/sse");
  source.addEventListener("view", (ev) => onView(JSON.parse(ev.data)));
  source.addEventListener("alerts", (ev) => onAlerts(JSON.parse(ev.data)));
  source.addEventListener("tables", (ev) => onTables(JSON.parse(ev.data)));
  source.onerror = async () => {
    $("#conn").textContent = "dashboard link lost: retrying";
    $("#conn").className = "bad";
    if (source.readyState !== EventSource.CLOSED) return;  // the browser retries itself
    // Closed for good (an HTTP error, e.g. the dashboard restarted and forgot the
    // login): back to the login page if that is why, else try again shortly.
    try {
      const resp = await fetch("/api/view");
      if (resp.status === 401) { location.href = "/login"; return; }
    } catch (e) { /* the dashboard is down: retry */ }
    setTimeout(connect, 2000);
  };
}

setInterval(() => {  // ages move on between views
  for (const cell of document.querySelectorAll("#alerts td.age")) {
    if (cell.dataset.ts) cell.textContent = age(Number(cell.dataset.ts));
  }
}, 5000);

// ------------------------------------------------------------------ tabs

function show(tab) {
  $("#toast").hidden = true;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === tab);
  for (const m of document.querySelectorAll("main.tab")) m.hidden = m.id !== tab;
  if (tab === "report" && !$("#report-body").hasChildNodes()) runReport();
}
for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.tab));

function epoch(input) {
  return input.value ? String(new Date(input.value).getTime() / 1000) : "";
}

function localInput(ts) {
  const d = new Date(ts * 1000 - new Date().getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 16);
}

// ------------------------------------------------------------------ search

$("#search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = ev.target;
  const params = new URLSearchParams({table: f.table.value, since: epoch(f.since), until: epoch(f.until),
                                      dealer: f.dealer.value, code: f.code.value});
  const resp = await fetch("/api/search/" + f.what.value + "?" + params);
  if (!resp.ok) { $("#search-note").textContent = "Search refused: " + await resp.text(); return; }
  const data = await resp.json();
  drawResults(f.what.value, data.rows);
  $("#search-note").textContent = data.rows.length + " found" + (data.rows.length >= 500 ? " (the newest 500)" : "") +
    (data.source === "memory" ? " · since the dashboard started (no archive configured)" : "");
});

function drawResults(what, rows) {
  const head = what === "hands"
    ? ["Ended", "Table", "Hand", "Game", "Dealer", "Players", "Pot", "End", "Alerts", "Export"]
    : ["Raised", "Table", "Severity", "Code", "Message", "Dealer", "State", "By", "Note"];
  $("#results thead").replaceChildren(el("tr", {}, ...head.map((h) => el("th", {}, h))));
  const body = $("#results tbody");
  body.replaceChildren();
  for (const r of rows) {
    if (what === "hands") {
      const href = "/api/hand/" + encodeURIComponent(r.hand_id);
      body.append(el("tr", {class: "hand-row", "data-hand": r.hand_id},
        el("td", {}, clock(r.ended_ts)), el("td", {}, r.table), el("td", {}, r.hand_id),
        el("td", {}, r.game || ""), el("td", {}, dealerText(r.dealer)), el("td", {}, r.players),
        el("td", {}, r.pot ?? ""), el("td", {}, r.ended || ""), el("td", {}, Array.isArray(r.alerts) ? r.alerts.join(", ") : r.alerts),
        el("td", {}, el("a", {href: href + ".json", download: ""}, "JSON"), " ",
           el("a", {href: href + ".phh", download: ""}, "PHH"))));
    } else {
      body.append(el("tr", {class: "alert-row sev-" + r.severity},
        el("td", {}, clock(r.raised_ts)), el("td", {}, r.table), el("td", {}, el("span", {class: "sev"}, r.severity)),
        el("td", {}, r.code), el("td", {}, r.message), el("td", {}, dealerText(r.dealer)),
        el("td", {}, r.state), el("td", {}, r.resolved_by || r.acknowledged_by || ""), el("td", {}, r.note || "")));
    }
  }
}

// ------------------------------------------------------------------ shift report

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// A label of a horizontal chart in at most two lines of ``room`` px: split at spaces;
// a line still too long is squeezed to fit (textLength), never cut (issue 22: long
// dealer names were cut at the chart's left edge).
const CHAR_PX = 7.6;  // 13 px DejaVu Sans, an average character
function labelLines(label, room) {
  const per = Math.max(4, Math.floor(room / CHAR_PX));
  const words = String(label).split(" ");
  const lines = [""];
  for (const w of words) {
    const cur = lines[lines.length - 1];
    if (!cur) lines[lines.length - 1] = w;
    else if ((cur + " " + w).length <= per || lines.length === 2) lines[lines.length - 1] = cur + " " + w;
    else lines.push(w);
  }
  return lines.map((text) => ({text, squeeze: text.length > per}));
}

// A bar chart drawn by the page: rows [{label, value, cls}], vertical or horizontal.
// It scales to the width of its box (a phone included): the SVG has a viewBox only.
function bars(title, rows, opts) {
  const horizontal = opts && opts.horizontal;
  // Drawn at the size it is shown (a phone's chart is narrower, its text as large).
  const w = Math.round(Math.max(320, Math.min(880, window.innerWidth - 44)));
  const longest = Math.max(4, ...rows.map((r) => String(r.label).length));
  const left = horizontal ? Math.min(Math.max(longest * CHAR_PX + 16, 90), 360, w * 0.42) : 0;
  const split = rows.map((r) => horizontal ? labelLines(r.label, left - 14) : []);
  const rowH = split.some((l) => l.length > 1) ? 38 : 24;
  const h = horizontal ? Math.max(60, rows.length * rowH + 20) : 220;
  const chart = svg("svg", {viewBox: "0 0 " + w + " " + h, class: "chart", role: "img",
                            preserveAspectRatio: "xMinYMin meet"});
  chart.append(svg("title", {}, title));
  const max = Math.max(1, ...rows.map((r) => r.value || 0));
  if (horizontal) {
    const span = w - left - Math.min(170, w * 0.32);
    rows.forEach((r, i) => {
      const y = 10 + i * rowH, len = (r.value || 0) / max * span;
      const lines = split[i], mid = y + rowH / 2;
      const label = svg("text", {x: left - 8, y: mid - (lines.length - 1) * 8 + 4, "text-anchor": "end", class: "lbl",
                                 "data-label": String(r.label)});
      lines.forEach((line, k) => {
        const attrs = {x: left - 8, dy: k ? 16 : 0};
        if (line.squeeze) Object.assign(attrs, {textLength: left - 14, lengthAdjust: "spacingAndGlyphs"});
        label.append(svg("tspan", attrs, line.text));
      });
      chart.append(label);
      chart.append(svg("rect", {x: left, y: mid - (rowH - 8) / 2 + (rowH > 24 ? 5 : 0), width: Math.max(len, 1),
                                height: Math.min(rowH - 8, 16), class: "bar " + (r.cls || "")}));
      chart.append(svg("text", {x: left + len + 6, y: mid + 5, class: "val"}, r.text ?? String(r.value ?? "—")));
    });
  } else {
    const bottom = h - 40, top = 20, n = Math.max(rows.length, 1), slot = (w - 60) / n;
    chart.append(svg("line", {x1: 50, y1: bottom, x2: w - 10, y2: bottom, class: "axis"}));
    for (const frac of [0.5, 1]) {
      const y = bottom - frac * (bottom - top);
      chart.append(svg("line", {x1: 50, y1: y, x2: w - 10, y2: y, class: "grid"}));
      chart.append(svg("text", {x: 44, y: y + 4, "text-anchor": "end", class: "val"}, String(Math.round(frac * max))));
    }
    rows.forEach((r, i) => {
      const x = 55 + i * slot, hh = (r.value || 0) / max * (bottom - top);
      chart.append(svg("rect", {x: x + 2, y: bottom - hh, width: Math.max(slot - 6, 2), height: hh, class: "bar " + (r.cls || "")}));
      if (r.value) chart.append(svg("text", {x: x + slot / 2, y: bottom - hh - 4, "text-anchor": "middle", class: "val"}, String(r.value)));
      const most = Math.max(2, Math.floor((w - 60) / 70));  // labels that fit side by side
      if (n <= most || i % Math.ceil(n / most) === 0) {
        chart.append(svg("text", {x: x + slot / 2, y: bottom + 16, "text-anchor": "middle", class: "lbl"}, r.label));
      }
    });
  }
  return el("figure", {}, el("figcaption", {}, title), chart);
}

function groupTable(rows, key, heading) {
  return el("table", {class: "group"},
    el("thead", {}, el("tr", {}, ...[heading, "Hands", "Errors", "Warnings", "Errors / 100 hands"].map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {},
      el("td", {}, r[key]), el("td", {}, r.hands), el("td", {}, r.errors), el("td", {}, r.warnings),
      el("td", {}, r.errors_per_100 ?? "—")))));
}

function tagsToReplace(tables) {
  // Issue 19: cards the dealer had to enter by hand have dead tags: replace them.
  const rows = tables.filter((t) => t.manual_cards > 0);
  if (!rows.length) return el("p", {class: "tags-ok", id: "tags-to-replace"}, "No card was entered by hand: no tag to replace.");
  return el("table", {class: "group", id: "tags-to-replace"},
    el("thead", {}, el("tr", {}, el("th", {}, "Table"), el("th", {}, "Cards entered by hand (tags to replace)"))),
    el("tbody", {}, ...rows.map((t) => el("tr", {}, el("td", {}, t.table), el("td", {}, t.manual_cards)))));
}

async function runReport(ev) {
  if (ev) ev.preventDefault();
  const f = $("#report-form");
  if (!f.since.value) {
    const now = Date.now() / 1000;
    f.until.value = localInput(Math.ceil(now / 3600) * 3600);
    f.since.value = localInput(Math.ceil(now / 3600) * 3600 - 8 * 3600);
  }
  const params = new URLSearchParams({since: epoch(f.since), until: epoch(f.until)});
  const resp = await fetch("/api/report?" + params);
  const body = $("#report-body");
  if (!resp.ok) { body.replaceChildren(el("p", {class: "problem"}, "Report refused: " + await resp.text())); return; }
  const r = await resp.json();
  const hours = r.hours.map((h) => ({label: new Date(h.hour * 1000).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"}),
                                     value: h.hands}));
  const perHour = r.hands / Math.max(1, (r.until - r.since) / 3600);
  body.replaceChildren(
    el("h2", {}, "Shift report · " + clock(r.since) + " – " + clock(r.until)),
    el("div", {class: "kpis"},
      el("div", {class: "kpi"}, el("b", {id: "kpi-hands"}, r.hands), " hands"),
      el("div", {class: "kpi"}, el("b", {}, perHour.toFixed(1)), " hands / hour"),
      el("div", {class: "kpi"}, el("b", {id: "kpi-errors"}, r.errors), " errors"),
      el("div", {class: "kpi"}, el("b", {}, r.hands ? (100 * r.errors / r.hands).toFixed(1) : "—"), " errors / 100 hands")),
    el("div", {class: "charts"},
      bars("Hands per hour", hours),
      bars("Alerts per 100 hands, by kind", r.codes.map((c) => ({label: c.code, value: c.per_100,
        text: c.per_100 + " (" + c.count + ")", cls: "sev-" + c.severity})), {horizontal: true}),
      bars("Errors per 100 hands, by dealer", r.dealers.map((d) => ({label: d.dealer, value: d.errors_per_100,
        text: (d.errors_per_100 ?? "—") + " (" + d.hands + " hands)"})), {horizontal: true}),
      bars("Errors per 100 hands, by table", r.tables.map((t) => ({label: t.table, value: t.errors_per_100,
        text: (t.errors_per_100 ?? "—") + " (" + t.hands + " hands)"})), {horizontal: true})),
    el("div", {class: "groups"}, groupTable(r.dealers, "dealer", "Dealer"), groupTable(r.tables, "table", "Table")),
    tagsToReplace(r.tables));
  body.dataset.ready = "1";
}
$("#report-form").addEventListener("submit", runReport);
$("#print").addEventListener("click", () => window.print());

const startTab = new URLSearchParams(location.search).get("tab");
if (startTab) show(startTab);
connect();
