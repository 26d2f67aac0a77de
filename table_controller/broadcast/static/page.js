// stud-table broadcast pages: one script for overlay, venue and producer.
// Everything is drawn here (cards are SVG); nothing is loaded from outside the machine.
// The stream is server-sent events; EventSource reconnects by itself and sends
// Last-Event-ID, and the server resumes right after it. Ids are also checked here
// so a message is never applied twice.
(() => {
  "use strict";
  const body = document.body;
  const PAGE = body.dataset.page, TABLE = body.dataset.table, OUTPUT = body.dataset.output;
  const SUIT = {
    s: "M50 10 C62 30 88 42 88 60 C88 74 74 80 62 74 L68 94 L32 94 L38 74 C26 80 12 74 12 60 C12 42 38 30 50 10 Z",
    h: "M50 92 C34 76 10 60 10 38 C10 22 22 12 34 12 C42 12 48 17 50 24 C52 17 58 12 66 12 C78 12 90 22 90 38 C90 60 66 76 50 92 Z",
    d: "M50 6 L86 50 L50 94 L14 50 Z",
    c: "M50 8 A19 19 0 0 1 66 38 A19 19 0 1 1 60 70 L66 94 L34 94 L40 70 A19 19 0 1 1 34 38 A19 19 0 0 1 50 8 Z",
  };
  const RED = { h: true, d: true };
  const RANK = { T: "10" };
  const STREET = { 3: "3rd street", 4: "4th street", 5: "5th street", 6: "6th street", 7: "7th street" };
  let state = null, result = null, lastAction = null, lastId = 0, info = null;
  const alerts = [], readers = {};
  let status = null, source = null;
  let stats = null, statsTimer = null; // player statistics (the archive), if the output shows them
  const manualCards = new Set(); // this hand's cards entered by hand (events' "manual": true)
  const readerZones = new Set(); // zones the readers cover (their reports): "board" if the layout has one

  const esc = (t) => String(t).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

  // A card as SVG. The index (rank over a small suit) sits in the left strip, which
  // stays visible when cards overlap on a plate; a large suit fills the rest.
  function cardSvg(code, face) {
    if (face === "unread") {
      // An up card dealt that no reader read (issue 19, the state's up_row slot
      // {"unread": true}): nobody knows its face, so it looks face down, marked.
      const hint = PAGE === "producer" ? ' title="not read: Manual card can enter it"' : "";
      // A back in grey with a yellow edge; "?" where a rank would be and the words in
      // the left strip, which stays visible under the next card of the row.
      const font = 'font-weight="bold" fill="#ffe07a" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif"';
      return `<span class="card unread" data-card="unread" data-face="unread"${hint}><svg viewBox="0 0 60 84">` +
        `<rect x="1.5" y="1.5" width="57" height="81" rx="6" fill="#3a4250" stroke="#ffe07a" stroke-width="3" stroke-dasharray="6 3"/>` +
        `<path d="M6 21 L54 21 M6 42 L54 42 M6 63 L54 63 M22 6 L22 78 M39 6 L39 78" stroke="#566072" stroke-width="3"/>` +
        `<rect x="4" y="4" width="27" height="76" rx="3" fill="#1a2330"/>` +
        `<text x="6" y="29" font-size="27" ${font}>?</text>` +
        `<text x="5.5" y="58" font-size="8.6" ${font}>NOT</text>` +
        `<text x="5.5" y="69" font-size="8.6" ${font}>READ</text>` +
        `</svg></span>`;
    }
    if (!code) {
      return `<span class="card" data-card="back" data-face="back"><svg viewBox="0 0 60 84">` +
        `<rect x="1" y="1" width="58" height="82" rx="6" fill="#f4f4f4"/>` +
        `<rect x="5" y="5" width="50" height="74" rx="4" fill="#1f4e9c"/>` +
        `<path d="M5 21 L55 21 M5 42 L55 42 M5 63 L55 63 M22 5 L22 79 M39 5 L39 79" stroke="#4f7fd0" stroke-width="3"/>` +
        `</svg></span>`;
    }
    const rank = RANK[code[0]] || code[0], suit = code[1];
    const color = RED[suit] ? "#c8102e" : "#111";
    const wide = rank.length > 1 ? ' textLength="24" lengthAdjust="spacingAndGlyphs"' : "";
    return `<span class="card" data-card="${esc(code)}" data-face="${face}"><svg viewBox="0 0 60 84">` +
      `<rect x="1" y="1" width="58" height="82" rx="6" fill="${face === "down" ? "#fff8e0" : "#fff"}" stroke="#888"/>` +
      `<text x="3" y="27" font-size="27" font-weight="bold" fill="${color}"${wide} font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif">${esc(rank)}</text>` +
      `<g transform="translate(4 32) scale(0.22)"><path d="${SUIT[suit]}" fill="${color}"/></g>` +
      `<g transform="translate(28 44) scale(0.3)"><path d="${SUIT[suit]}" fill="${color}"/></g>` +
      `</svg></span>`;
  }

  function seatName(no) {
    const row = state && state.seats ? state.seats.find((s) => s.seat === no) : null;
    return row && row.name ? row.name : `Seat ${no}`;
  }

  const ACTION = { fold: "folds", check: "checks", call: "calls", bet: "bets", raise: "raises to",
    complete: "completes to", bring_in: "brings in", allin: "all in" };

  function shownOf(seat) {
    return result && state && result.hand === state.hand
      ? (result.shown || []).find((h) => h.seat === seat) : null;
  }

  function renderSeat(row) {
    const won = result && result.hand === state.hand && result.winners.includes(row.seat);
    const inHand = row.status !== "empty";
    const cls = ["seat", inHand ? row.status : "waiting"];
    if (state.to_act === row.seat && !won) cls.push("to-act");
    if (won) cls.push("winner");
    // A hand shown down is public: a page without its down cards (venue, mode never,
    // the no-spoiler showdown mode before its state) turns them up from the result's
    // shown cards, the rest stay backs.
    const shownHand = shownOf(row.seat);
    if (shownHand) cls.push("shown");
    const turned = shownHand && !Array.isArray(row.down)
      ? shownHand.cards.filter((c) => !row.up.includes(c)) : [];
    // A page with the down cards: a hole card no reader read is counted in down_count
    // but in no list (its place is unknown: after the ones read), drawn NOT READ.
    const downs = Array.isArray(row.down)
      ? row.down.map((c) => cardSvg(c, "down")).concat(Array.from(
        { length: Math.max(0, row.down_count - row.down.length) }, () => cardSvg(null, "unread")))
      : turned.length === row.down_count && turned.length
        ? turned.map((c) => cardSvg(c, "shown"))
        : Array.from({ length: row.down_count }, () => cardSvg(null, "back"));
    // up_row: the face-up row with a slot for each up card no reader read (an older
    // state without it: the up cards).
    const ups = (Array.isArray(row.up_row) ? row.up_row : row.up)
      .map((c) => (typeof c === "string" ? cardSvg(c, "up") : cardSvg(null, "unread")));
    const markers = [];
    if (!inHand) markers.push(`<span class="marker">${state.hand != null && state.street ? "NOT IN HAND" : "NEXT HAND"}</span>`);
    if (state.bring_in === row.seat && state.street === 3) markers.push('<span class="marker bring">BRING-IN</span>');
    if (state.to_act === row.seat && !won) markers.push('<span class="marker act">TO ACT</span>');
    if (row.status === "folded") markers.push('<span class="marker">FOLDED</span>');
    else if (row.status === "dead") markers.push('<span class="marker">DEAD HAND</span>');
    else if (lastAction && lastAction.seat === row.seat && lastAction.hand === state.hand && !result) {
      const amount = lastAction.amount != null && !["fold", "check"].includes(lastAction.action) ? ` ${lastAction.amount}` : "";
      markers.push(`<span class="marker last">${esc((ACTION[lastAction.action] || lastAction.action) + amount)}</span>`);
    }
    if (won) markers.push('<span class="marker won">WINNER</span>');
    // At showdown the plate reads what the hand is (the result's description), not
    // what its up cards show.
    const reading = shownHand ? shownHand.description
      : row.reading || (row.showing ? `${row.showing} showing` : "");
    const equity = typeof row.equity === "number" && !result
      ? `<span class="equity" data-equity="${row.equity}">${(row.equity * 100).toFixed(row.equity < 0.1 ? 1 : 0)}%<span class="bar"><i data-w="${(row.equity * 100).toFixed(1)}"></i></span></span>` : "";
    const stack = row.stack != null ? `${row.stack.toLocaleString("en-US")}` : "";
    const bet = row.bet ? `<span class="bet">bet ${row.bet}</span>` : "";
    const name = row.name || `Seat ${row.seat}`;
    const cc = row.country ? `<span class="cc">${esc(row.country)}</span>` : "";
    const st = statLine(row.name);
    return `<div class="${cls.join(" ")}" data-seat="${row.seat}" data-status="${row.status}" data-name="${esc(name)}">` +
      `<div class="cards">${inHand ? downs.join("") + (downs.length && ups.length ? '<span class="gap"></span>' : "") + ups.join("") : ""}</div>` +
      `<div class="who"><div class="name">${esc(name)}${cc}</div>${st}</div>` +
      `<div class="nums"><span class="chips">${stack ? stack : "&nbsp;"}</span>${equity}</div>` +
      `<div class="line2"><span class="reading">${esc(reading)}</span>${bet}${markers.join("")}</div>` +
      `</div>`;
  }

  // A plate's statistics line: VPIP, 3rd-street aggression, aggression factor, went to
  // showdown, won at showdown, hands (the output's scope: this session or all time).
  function statLine(name) {
    const players = stats && (stats.players || stats.session);
    const r = name && players ? players[name] : null;
    if (!r) return "";
    const pct = (v) => (v == null ? "–" : `${Math.round(v)}%`);
    return `<div class="stat" data-stat-name="${esc(name)}">VPIP ${pct(r.vpip_pct)} · 3rd ${pct(r.third_aggr_pct)}` +
      ` · AF ${r.aggression == null ? "–" : r.aggression.toFixed(1)} · SD ${pct(r.showdown_pct)}` +
      ` · W$SD ${pct(r.won_at_showdown_pct)} · ${r.hands} ${r.hands === 1 ? "hand" : "hands"}</div>`;
  }

  async function loadStats() {
    const res = await fetch(`/api/stats/${encodeURIComponent(OUTPUT)}/${encodeURIComponent(TABLE)}`,
      { credentials: "same-origin" });
    if (res.ok) { stats = await res.json(); render(); }
    if (PAGE === "producer") renderStats();
  }

  function renderStats() {
    const box = document.getElementById("stats");
    if (!box) return;
    if (!stats) { box.textContent = "no statistics (no [archive] configured, or it cannot be read)"; return; }
    const names = Array.from(new Set([...Object.keys(stats.session || {}), ...Object.keys(stats.all || {})])).sort();
    // One cell per figure: this session / all time.
    const fig = (r, key) => (r && r[key] != null ? String(r[key]) : "–");
    const cell = (n, key) => `<td>${fig((stats.session || {})[n], key)} / ${fig((stats.all || {})[n], key)}</td>`;
    const keys = ["hands", "vpip_pct", "third_aggr_pct", "aggression", "showdown_pct", "won_at_showdown_pct"];
    box.innerHTML = names.length ? `<p>${esc(stats.game)}: this session / all time</p><table><thead><tr><th>player</th>` +
      `<th>hands</th><th>VPIP %</th><th>3rd %</th><th>AF</th><th>SD %</th><th>W$SD %</th></tr></thead><tbody>` +
      names.map((n) => `<tr data-player="${esc(n)}"><td>${esc(n)}</td>${keys.map((k) => cell(n, k)).join("")}</tr>`).join("") +
      "</tbody></table>" : "no console-driven hand archived yet";
  }

  function startStats() {
    if (statsTimer !== null) return;
    loadStats();
    statsTimer = setInterval(loadStats, 30000);
  }

  function renderResult() {
    const el = document.getElementById("result");
    if (!result || !state || result.hand !== state.hand) { el.hidden = true; el.innerHTML = ""; return; }
    const winners = result.winners.map(seatName).join(" and ");
    const best = (result.shown || []).find((h) => result.winners.includes(h.seat));
    const shown = (result.shown || []).map((h) =>
      `<div class="shown${result.winners.includes(h.seat) ? " won" : ""}" data-shown-seat="${h.seat}">` +
      `<span class="who2">${esc(seatName(h.seat))}</span><span class="cards">${h.cards.map((c) => cardSvg(c, "up")).join("")}</span>` +
      `<span>${esc(h.description)}</span></div>`).join("");
    el.innerHTML = `<h2 data-winners="${result.winners.join(",")}">${esc(winners || "No winner")} ${result.winners.length > 1 ? "split the pot" : "wins"}</h2>` +
      (best ? `<div class="how">with ${esc(best.description)}</div>` : "") + shown;
    el.hidden = false;
  }

  function render() {
    body.dataset.lastId = String(lastId);
    const seats = document.getElementById("seats");
    if (!state) { seats.innerHTML = ""; fit(); return; }
    body.dataset.hand = state.hand == null ? "" : String(state.hand);
    const drawn = state.seats.filter((s) => s.status !== "empty" || s.name);
    seats.innerHTML = drawn.map(renderSeat).join("");
    // No style attribute in markup (the pages' CSP): bar widths are set from script.
    seats.querySelectorAll("[data-w]").forEach((i) => { i.style.width = `${i.dataset.w}%`; });
    document.getElementById("title").textContent =
      `Table ${TABLE}${state.hand != null ? " · hand " + state.hand : ""}` +
      (PAGE !== "venue" && info && info.delayed ? ` · delay ${fmtDelay(info.delay_s)}` : "");
    document.getElementById("street").textContent = state.street ? STREET[state.street] : "Between hands";
    document.getElementById("pot").textContent = state.pot != null ? `Pot ${state.pot.toLocaleString("en-US")}` : "";
    document.getElementById("community").innerHTML = state.community ? `Community card ${cardSvg(state.community, "up")}` : "";
    renderResult();
    if (PAGE === "venue") {
      const n = drawn.length;
      document.getElementById("stage").style.setProperty("--cols", String(n <= 4 ? 2 : n <= 6 ? 3 : 4));
    }
    fit();
    if (PAGE === "producer") { markManual(); renderPanel(); renderManualZones(); renderUnread(); }
  }

  // ---- layout: the overlay's position and scale, and fitting the TV-safe area
  const OPTIONS = new URLSearchParams(location.search);
  const POSITION = ["bottom", "left", "right"].includes(OPTIONS.get("position")) ? OPTIONS.get("position") : "bottom";
  const SCALE = Math.min(Math.max(Number(OPTIONS.get("scale")) || 1, 0.5), 2);
  if (PAGE !== "venue") body.classList.add(`layout-${PAGE === "overlay" ? POSITION : "bottom"}`);

  function inside(r, box) {
    return r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
  }
  function apart(a, b) {
    return a.right <= b.left + 0.5 || b.right <= a.left + 0.5 || a.bottom <= b.top + 0.5 || b.bottom <= a.top + 0.5;
  }

  // True if every plate, the board and the result lie inside the stage's safe area
  // (its padding box), overlap nothing, and nothing in a plate is clipped.
  function fits() {
    const stage = document.getElementById("stage");
    const st = getComputedStyle(stage), r = stage.getBoundingClientRect();
    const k = stage.offsetWidth ? r.width / stage.offsetWidth : 1; // the producer's preview is scaled
    const box = { left: r.left + k * parseFloat(st.paddingLeft), right: r.right - k * parseFloat(st.paddingRight),
      top: r.top + k * parseFloat(st.paddingTop), bottom: r.bottom - k * parseFloat(st.paddingBottom) };
    const parts = Array.from(document.querySelectorAll("#seats .seat, #board, #result:not([hidden])"));
    const rects = parts.map((el) => el.getBoundingClientRect());
    for (let i = 0; i < parts.length; i++) {
      if (!body.classList.contains("narrow") && !inside(rects[i], box)) return false;
      for (let j = i + 1; j < parts.length; j++) if (!apart(rects[i], rects[j])) return false;
    }
    for (const el of document.querySelectorAll("#seats .seat, #seats .seat .cards, #seats .seat .name, #seats .seat .line2")) {
      if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) return false;
    }
    return true;
  }

  // A long name first gets a smaller font (down to 60 %), on two lines at most,
  // before the whole overlay is made smaller for it; it is never cut.
  function fitNames() {
    for (const el of document.querySelectorAll("#seats .seat .name")) {
      el.style.fontSize = "";
      let size = parseFloat(getComputedStyle(el).fontSize);
      const min = size * 0.6;
      while ((el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1) && size > min) {
        size *= 0.92;
        el.style.fontSize = `${size.toFixed(2)}px`;
      }
    }
  }

  function fit() {
    const stage = document.getElementById("stage");
    if (PAGE === "producer") { // the preview beside the panel, or above it in a narrow window
      // The layout viewport's width, not innerWidth: on a phone, content wider than the
      // screen zooms the visual viewport out, and innerWidth would follow it.
      // Above the panel the preview takes at most half the height, so the panel's
      // controls show without scrolling.
      const w = document.documentElement.clientWidth, h = document.documentElement.clientHeight;
      const narrowProducer = w < 1800;
      body.classList.toggle("producer-narrow", narrowProducer);
      const ps = narrowProducer ? Math.min(w / 1920, h / 2 / 1080) : 0.72;
      stage.style.setProperty("--ps", ps.toFixed(4));
    }
    const narrow = PAGE !== "producer" && PAGE !== "overlay" && innerWidth < 760;
    body.classList.toggle("narrow", narrow);
    let u = PAGE === "producer" ? 1 : narrow ? innerWidth / 820 : Math.min(innerWidth / 1920, innerHeight / 1080) * SCALE;
    for (let i = 0; i < 40; i++) {
      stage.style.setProperty("--u", `${u.toFixed(4)}px`);
      fitNames();
      if (fits()) break;
      u *= 0.95;
    }
    body.dataset.fit = fits() ? "1" : "0";
    body.dataset.u = u.toFixed(4);
  }
  addEventListener("resize", () => fit());

  function fmtDelay(s) {
    if (s >= 3600) return `${(s / 3600).toFixed(s % 3600 ? 1 : 0)} h`;
    if (s >= 60) return `${(s / 60).toFixed(s % 60 ? 1 : 0)} min`;
    return `${s} s`;
  }

  function renderPanel() {
    document.getElementById("status").textContent = status ? status.status + (status.reason ? `: ${status.reason}` : "") : "unknown";
    const open = state && state.alerts ? state.alerts : [];
    document.getElementById("alerts").innerHTML = open.length
      ? open.map((a) => `<li class="alert-${esc(a.severity)}">${esc(a.code)}: ${esc(a.message)}</li>`).join("")
      : "<li>none</li>";
    document.getElementById("readers").innerHTML = Object.keys(readers).sort((a, b) => a.localeCompare(b, "en", { numeric: true })).map((id) => {
      const r = readers[id];
      return `<li data-reader="${esc(id)}">${esc(id)}: ${esc(r.status || r.state || JSON.stringify(r).slice(0, 60))}</li>`;
    }).join("") || "<li>no report yet</li>";
  }

  // A number typed in a delay box: digits (and one decimal point) only. Number("")
  // is 0, and an empty box once made an output live (issue 22): refused here, and
  // the service refuses a body without a number too.
  function typed(text, whole) {
    const t = String(text).trim();
    if (!(whole ? /^[0-9]+$/ : /^[0-9]+(\.[0-9]+)?$/).test(t)) return null;
    return Number(t);
  }

  // ---- manual card entry (issue 19): the producer enters a card whose tag no reader
  // reads; the service sends the dealer console's `card` command to the table's daemon,
  // which refuses an entry that contradicts the readers. Producer page only.
  const RANKS = ["A", "K", "Q", "J", "T", "9", "8", "7", "6", "5", "4", "3", "2"];
  const RANK_NAME = { A: "ace", K: "king", Q: "queen", J: "jack", T: "ten", 9: "nine", 8: "eight",
    7: "seven", 6: "six", 5: "five", 4: "four", 3: "three", 2: "two" };
  const SUITS = [["s", "\u2660 spades"], ["h", "\u2665 hearts"], ["d", "\u2666 diamonds"], ["c", "\u2663 clubs"]];
  let zoneKey = "";

  function zoneLabel(z) {
    const m = /^seat(\d+)\.(down|up)$/.exec(z);
    if (m) return `seat ${m[1]} ${m[2]}`;
    return z; // burn, board (rule 15's community card)
  }

  // The places offered: every seat's down and up cards (the table's seats from the
  // state), the burn, and the board when a reader covers one.
  function renderManualZones() {
    const select = document.getElementById("m-zone");
    if (!select) return;
    const n = state && state.seats ? state.seats.length : 8;
    const zones = [];
    for (let i = 1; i <= n; i++) zones.push(`seat${i}.down`, `seat${i}.up`);
    zones.push("burn");
    if (readerZones.has("board")) zones.push("board");
    const key = zones.join(",");
    if (key === zoneKey) return; // keep the producer's choice
    zoneKey = key;
    const chosen = select.value;
    select.innerHTML = '<option value="">where…</option>' +
      zones.map((z) => `<option value="${esc(z)}">${esc(zoneLabel(z))}</option>`).join("");
    if (zones.includes(chosen)) select.value = chosen;
  }

  // The up cards no reader read (the state's up_row slots {"unread": true}): where a
  // manual entry is due. Choosing one picks its place in the form.
  function renderUnread() {
    const box = document.getElementById("m-unread");
    if (!box) return;
    const places = [];
    for (const row of state && state.hand != null && state.seats ? state.seats : []) {
      if (row.status !== "active") continue;
      if (Array.isArray(row.down) && row.down_count > row.down.length) places.push([row.seat, "down"]);
      if (Array.isArray(row.up_row) && row.up_row.some((c) => typeof c !== "string")) places.push([row.seat, "up"]);
    }
    box.hidden = !places.length;
    box.innerHTML = places.length ? "Not read: " + places.map(([seat, face]) =>
      `<button type="button" class="unread-seat" data-zone="seat${seat}.${face}">${esc(seatName(seat))} ${face} card</button>`).join(" ") +
      " — enter it here to fill the card marked NOT READ." : "";
    box.querySelectorAll("button").forEach((b) => b.addEventListener("click", () => {
      document.getElementById("m-zone").value = b.dataset.zone;
    }));
  }

  function markManual() {
    document.querySelectorAll("#stage .card[data-card]").forEach((el) => {
      if (manualCards.has(el.dataset.card)) { el.dataset.manual = "1"; el.classList.add("manual"); }
    });
  }

  function buildManual() {
    const panel = document.getElementById("panel");
    const box = document.createElement("section");
    box.id = "manual";
    box.innerHTML = "<h2>Manual card</h2>" +
      '<p class="hint">A card no reader reads (dead or damaged tag): say where it is and what it is.</p>' +
      '<p class="unread" id="m-unread" hidden></p>' +
      '<div class="row"><select id="m-zone" aria-label="where the card is"></select>' +
      '<select id="m-rank" aria-label="rank"><option value="">rank…</option>' +
      RANKS.map((r) => `<option value="${r}">${r === "T" ? "10" : r}</option>`).join("") + "</select>" +
      '<select id="m-suit" aria-label="suit"><option value="">suit…</option>' +
      SUITS.map(([s, name]) => `<option value="${s}">${name}</option>`).join("") + "</select>" +
      '<button id="m-enter" type="button">Enter…</button></div>' +
      '<div class="confirm" id="m-confirm" hidden><span class="ask"></span> ' +
      '<button class="yes" type="button">Confirm</button> <button class="no" type="button">Cancel</button></div>' +
      '<div id="m-result" class="result" data-accepted=""></div>';
    panel.insertBefore(box, panel.firstChild);
    renderManualZones();
    renderUnread();
    const out = box.querySelector("#m-result"), ask = box.querySelector("#m-confirm");
    const show = (text, accepted) => { out.textContent = text; out.dataset.accepted = accepted; };
    const send = async (zone, card) => {
      show("sending to the table…", "");
      box.querySelector("#m-enter").disabled = true;
      try {
        const r = await fetch(`/api/card/${encodeURIComponent(TABLE)}`, {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-Stud-Table": "1" },
          body: JSON.stringify({ zone, card, confirm: true }),
        });
        const type = r.headers.get("content-type") || "";
        if (type.startsWith("application/json")) {
          const reply = await r.json();
          show(reply.words || reply.reason || `status ${r.status}`, reply.accepted ? "1" : "0");
        } else {
          show(`Not sent: ${await r.text()}`, "0");
        }
      } catch (e) {
        show(`Not sent: the service cannot be reached (${e})`, "0");
      } finally {
        box.querySelector("#m-enter").disabled = false;
      }
    };
    box.querySelector("#m-enter").addEventListener("click", () => {
      const zone = box.querySelector("#m-zone").value, rank = box.querySelector("#m-rank").value;
      const suit = box.querySelector("#m-suit").value;
      if (!zone || !RANKS.includes(rank) || !SUITS.some(([s]) => s === suit)) {
        show("Choose where the card is, its rank and its suit.", "0");
        ask.hidden = true;
        return;
      }
      const suitName = SUITS.find(([s]) => s === suit)[1].split(" ")[1];
      ask.querySelector(".ask").textContent =
        `Enter the ${RANK_NAME[rank]} of ${suitName} at ${zoneLabel(zone)} by hand? It is marked manual on every feed.`;
      ask.hidden = false;
      show("", "");
      ask.querySelector(".yes").onclick = () => { ask.hidden = true; send(zone, rank + suit); };
    });
    ask.querySelector(".no").addEventListener("click", () => { ask.hidden = true; show("Cancelled: nothing sent.", ""); });
  }

  async function loadOutputs() {
    const box = document.getElementById("outputs");
    const res = await fetch("/api/outputs", { credentials: "same-origin" });
    if (!res.ok) { box.textContent = `cannot read the outputs (${res.status})`; return; }
    const all = await res.json();
    const errors = all.length ? all[0].store_errors : 0;
    const outs = all.filter((o) => o.delayed);
    box.innerHTML = outs.map((o) =>
      `<div class="out" data-out="${esc(o.output)}" data-delay="${o.delay_s}" data-min="${o.min_delay_s}"><b>${esc(o.output)}</b> · reveal ${esc(o.reveal)} · now <span class="now">${fmtDelay(o.delay_s)}</span>` +
      ` + ${o.offset_ms} ms · backlog ${o.backlog}<div class="why" data-source="${esc(o.delay_source)}">${esc(o.delay_why)}</div>` +
      `<input type="text" inputmode="decimal" value="${o.delay_s}" aria-label="delay in seconds"> s ` +
      `<input type="text" inputmode="numeric" value="${o.offset_ms}" aria-label="board-sync offset in ms"> ms ` +
      `<button class="set">Set</button> <span class="err"></span>` +
      `<div class="confirm" hidden><span class="ask"></span> <button class="yes">Confirm</button> <button class="no">Cancel</button></div></div>`).join("") + (errors
        ? `<div class="out err">${errors} message(s) could not be stored: check the service's disk and log</div>` : "")
      || "no delayed output";
    box.querySelectorAll(".out[data-out]").forEach((div) => {
      const err = div.querySelector(".err"), ask = div.querySelector(".confirm");
      const send = async (delay, offset, confirm) => {
        const r = await fetch(`/api/delay/${encodeURIComponent(div.dataset.out)}`, {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-Stud-Table": "1" },
          body: JSON.stringify({ delay_s: delay, offset_ms: offset, confirm }),
        });
        if (r.status === 409) { // the service wants a confirmation too (a large cut)
          ask.querySelector(".ask").textContent = await r.text();
          ask.hidden = false;
          ask.querySelector(".yes").onclick = () => { ask.hidden = true; send(delay, offset, true); };
          return;
        }
        err.textContent = r.ok ? "" : await r.text();
        if (r.ok) loadOutputs();
      };
      div.querySelector("button.set").addEventListener("click", () => {
        const [d, o] = div.querySelectorAll("input");
        const delay = typed(d.value, false), offset = typed(o.value, true);
        ask.hidden = true;
        if (delay === null) { err.textContent = "type the delay in seconds (a number, e.g. 30)"; return; }
        if (offset === null) { err.textContent = "type the offset in whole milliseconds (e.g. 0)"; return; }
        const min = Number(div.dataset.min);
        if (delay < min) {
          err.textContent = `${delay} s is below this output's minimum of ${min} s (min_public_delay_s)`;
          return;
        }
        err.textContent = "";
        send(delay, offset, false);
      });
      ask.querySelector(".no").addEventListener("click", () => { ask.hidden = true; });
    });
  }

  function handle(m) {
    const p = m.p;
    if (m.kind === "state") {
      state = p;
    } else if (m.kind === "event") {
      if (p.manual === true && p.card) manualCards.add(p.card); // issue 19: a dead tag entered by hand
      if (p.kind === "hand_started") { result = null; lastAction = null; manualCards.clear(); }
      else if (p.kind === "action") lastAction = { seat: p.seat, action: p.action, amount: p.amount, hand: p.hand };
      else if (p.kind === "fold") lastAction = { seat: p.seat, action: "fold", amount: null, hand: p.hand };
      else if (p.kind === "hand_result") result = p;
    } else if (m.kind === "alert") {
      alerts.push(p); if (alerts.length > 50) alerts.shift();
    } else if (m.kind === "reader") {
      readers[p.reader || p.id || String(Object.keys(readers).length + 1)] = p;
      (p.zones || []).forEach((z) => readerZones.add(z));
    } else if (m.kind === "status") {
      status = p;
    }
  }

  function connect() {
    const url = `/sse/${encodeURIComponent(OUTPUT)}/${encodeURIComponent(TABLE)}` + (lastId ? `?last=${lastId}` : "");
    source = new EventSource(url);
    source.addEventListener("msg", (e) => {
      const id = Number(e.lastEventId);
      if (id && id <= lastId) { // already drawn: never applied twice (counted for tests)
        body.dataset.dupes = String(Number(body.dataset.dupes || "0") + 1);
        return;
      }
      if (id) lastId = id;
      handle(JSON.parse(e.data));
      render();
    });
    source.addEventListener("info", (e) => {
      info = JSON.parse(e.data);
      if (info.stats && info.stats !== "off") startStats();
      render();
    });
    source.addEventListener("reset", () => { lastId = 0; }); // the service's store was replaced
    source.onopen = () => { document.getElementById("conn").textContent = ""; body.dataset.connected = "1"; };
    source.onerror = () => {
      body.dataset.connected = "0";
      document.getElementById("conn").textContent = PAGE === "overlay" ? "" : "reconnecting…";
      if (source.readyState === EventSource.CLOSED) { // the browser gave up (HTTP error): retry ourselves
        setTimeout(connect, 2000);
      }
    };
  }

  if (PAGE === "producer") { document.getElementById("panel").hidden = false; buildManual(); loadOutputs(); }
  connect();
})();
