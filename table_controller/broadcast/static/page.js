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

  const esc = (t) => String(t).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

  function cardSvg(code, face) {
    if (!code) {
      return `<span class="card" data-card="back" data-face="back"><svg viewBox="0 0 58 80">` +
        `<rect x="1" y="1" width="56" height="78" rx="6" fill="#f4f4f4"/>` +
        `<rect x="5" y="5" width="48" height="70" rx="4" fill="#1f4e9c"/>` +
        `<path d="M5 20 L53 20 M5 40 L53 40 M5 60 L53 60 M19 5 L19 75 M39 5 L39 75" stroke="#4f7fd0" stroke-width="3"/>` +
        `</svg></span>`;
    }
    const rank = RANK[code[0]] || code[0], suit = code[1];
    const color = RED[suit] ? "#c8102e" : "#111";
    return `<span class="card" data-card="${esc(code)}" data-face="${face}"><svg viewBox="0 0 58 80">` +
      `<rect x="1" y="1" width="56" height="78" rx="6" fill="${face === "down" ? "#fff8e0" : "#fff"}" stroke="#999"/>` +
      `<text x="6" y="30" font-size="26" font-weight="bold" fill="${color}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif">${esc(rank)}</text>` +
      `<g transform="translate(22 36) scale(0.32)"><path d="${SUIT[suit]}" fill="${color}"/></g>` +
      `</svg></span>`;
  }

  function seatName(no) {
    const row = state && state.seats ? state.seats.find((s) => s.seat === no) : null;
    return row && row.name ? row.name : `Seat ${no}`;
  }

  const ACTION = { fold: "folds", check: "checks", call: "calls", bet: "bets", raise: "raises to",
    complete: "completes to", bring_in: "brings in", allin: "all in" };

  function renderSeat(row) {
    const won = result && result.hand === state.hand && result.winners.includes(row.seat);
    const cls = ["seat", row.status];
    if (state.to_act === row.seat && !won) cls.push("to-act");
    if (won) cls.push("winner");
    // A hand shown down is public: a page without its down cards (venue, mode never)
    // turns them up from the result's shown cards, the rest stay backs.
    const shownHand = result && result.hand === state.hand && !Array.isArray(row.down)
      ? (result.shown || []).find((h) => h.seat === row.seat) : null;
    const turned = shownHand ? shownHand.cards.filter((c) => !row.up.includes(c)) : [];
    const downs = Array.isArray(row.down)
      ? row.down.map((c) => cardSvg(c, "down"))
      : turned.length === row.down_count
        ? turned.map((c) => cardSvg(c, "shown"))
        : Array.from({ length: row.down_count }, () => cardSvg(null, "back"));
    const ups = row.up.map((c) => cardSvg(c, "up"));
    const markers = [];
    if (state.bring_in === row.seat && state.street === 3) markers.push('<span class="marker bring">BRING-IN</span>');
    if (state.to_act === row.seat && !won) markers.push('<span class="marker act">TO ACT</span>');
    if (row.status === "folded") markers.push('<span class="marker">FOLDED</span>');
    else if (row.status === "dead") markers.push('<span class="marker">DEAD HAND</span>');
    else if (lastAction && lastAction.seat === row.seat && lastAction.hand === state.hand) {
      const amount = lastAction.amount != null && !["fold", "check"].includes(lastAction.action) ? ` ${lastAction.amount}` : "";
      markers.push(`<span class="marker last">${esc((ACTION[lastAction.action] || lastAction.action) + amount)}</span>`);
    }
    if (won) markers.push('<span class="marker act">WINNER</span>');
    const reading = row.reading || row.showing || "";
    const equity = typeof row.equity === "number"
      ? `<span class="equity" data-equity="${row.equity}"><span class="bar"><i data-w="${(row.equity * 100).toFixed(1)}"></i></span>${(row.equity * 100).toFixed(1)}%</span>` : "";
    const stack = row.stack != null ? `${row.stack.toLocaleString("en-US")}` : "";
    const bet = row.bet ? `<span class="bet">bet ${row.bet}</span>` : "";
    const name = row.name || `Seat ${row.seat}`;
    const cc = row.country ? `<span class="cc">${esc(row.country)}</span>` : "";
    return `<div class="${cls.join(" ")}" data-seat="${row.seat}" data-status="${row.status}" data-name="${esc(name)}">` +
      `<div class="who"><div class="name">${esc(name)}${cc}</div>` +
      `<div class="chips">${stack ? "Stack " + stack : "&nbsp;"}${bet}</div><div>${markers.join("")}</div></div>` +
      `<div class="cards">${downs.join("")}<span class="gap"></span>${ups.join("")}</div>` +
      `<div class="line2"><span class="reading">${esc(reading)}</span>${equity}</div>` +
      `</div>`;
  }

  function renderResult() {
    const el = document.getElementById("result");
    if (!result || !state || result.hand !== state.hand) { el.hidden = true; el.innerHTML = ""; return; }
    const winners = result.winners.map(seatName).join(" and ");
    const shown = (result.shown || []).map((h) =>
      `<div class="shown${result.winners.includes(h.seat) ? " won" : ""}" data-shown-seat="${h.seat}">` +
      `<span class="who2">${esc(seatName(h.seat))}</span>${h.cards.map((c) => cardSvg(c, "up")).join("")}` +
      `<span>${esc(h.description)}</span></div>`).join("");
    el.innerHTML = `<h2 data-winners="${result.winners.join(",")}">${esc(winners || "No winner")} ${result.winners.length > 1 ? "split the pot" : "wins"}</h2>${shown}`;
    el.hidden = false;
  }

  function render() {
    body.dataset.lastId = String(lastId);
    const seats = document.getElementById("seats");
    if (!state) { seats.innerHTML = ""; return; }
    body.dataset.hand = state.hand == null ? "" : String(state.hand);
    seats.innerHTML = state.seats.filter((s) => s.status !== "empty" || s.name).map(renderSeat).join("");
    // No style attribute in markup (the pages' CSP): bar widths are set from script.
    seats.querySelectorAll("[data-w]").forEach((i) => { i.style.width = `${i.dataset.w}%`; });
    document.getElementById("title").textContent =
      `Table ${TABLE}${state.hand != null ? " · hand " + state.hand : ""}` +
      (PAGE !== "venue" && info && info.delayed ? ` · delay ${fmtDelay(info.delay_s)}` : "");
    document.getElementById("street").textContent = state.street ? STREET[state.street] : "Between hands";
    document.getElementById("pot").textContent = state.pot != null ? `Pot ${state.pot.toLocaleString("en-US")}` : "";
    document.getElementById("community").innerHTML = state.community ? `Community card ${cardSvg(state.community, "up")}` : "";
    renderResult();
    if (PAGE === "producer") renderPanel();
  }

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
      if (p.kind === "hand_started") { result = null; lastAction = null; }
      else if (p.kind === "action") lastAction = { seat: p.seat, action: p.action, amount: p.amount, hand: p.hand };
      else if (p.kind === "fold") lastAction = { seat: p.seat, action: "fold", amount: null, hand: p.hand };
      else if (p.kind === "hand_result") result = p;
    } else if (m.kind === "alert") {
      alerts.push(p); if (alerts.length > 50) alerts.shift();
    } else if (m.kind === "reader") {
      readers[p.reader || p.id || String(Object.keys(readers).length + 1)] = p;
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
    source.addEventListener("info", (e) => { info = JSON.parse(e.data); render(); });
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

  if (PAGE === "producer") { document.getElementById("panel").hidden = false; loadOutputs(); }
  connect();
})();
