// One key's page: its summary and settings (GET /api/key) and the
// family's tables: a queue's in-flight, dead and next ready jobs (with
// RETRY and DELETE), a pool's numbers, a DELAY key's next timers, a
// room's members. Everything refreshes every 2 s.
import {
  h, replace, api, post, fmtInt, fmtDuration, fmtDue, fmtAgo, fmtTime, fmtCompact, serverNow,
  showError, clearError, toast, errorText, ApiError,
} from "./util.js";
import { FAMILIES } from "./lists.js";

const PAGE = 50;
const REFRESH_MS = 2000;

function kv(obj, fmt = {}) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return h("div", { class: "muted small" }, "—");
  return h("table", { class: "kv" }, h("tbody", {}, entries.map(([k, v]) =>
    h("tr", {}, h("th", {}, k.replaceAll("_", " ")),
      h("td", { class: "num", dataset: { col: k } },
        fmt[k] ? fmt[k](v) : typeof v === "number" ? fmtInt(v) : v === null ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v))))));
}

function stat(label, value, col, cls = "") {
  return h("div", { class: "count " + cls }, h("div", { class: "count-n", dataset: { col } }, fmtInt(value)), h("div", { class: "count-l" }, label));
}

function truncate(s, n = 120) {
  s = String(s ?? "");
  return s.length > n ? s.slice(0, n) + "…" : s;
}

// pagedTable: a table filled a page at a time. load(cursor, count) returns
// {cursor, items}; refresh reloads what is shown from the start.
function pagedTable({ id, title, cols, load, row, empty, controls }) {
  const st = { items: [], next: "0", loaded: false, busy: false };
  const tbody = h("tbody", {});
  const tableEl = h("table", { class: "grid", id },
    h("thead", {}, h("tr", {}, cols.map(([label, numeric]) => h("th", { class: numeric ? "num" : undefined }, label)))), tbody);
  const foot = h("div", { class: "list-status" });
  const countEl = h("span", { class: "badge" });
  const el = h("section", { class: "card panel wide" }, h("h2", {}, title, " ", countEl, controls || null), tableEl, foot);

  function render() {
    replace(tbody, st.items.map(row));
    tableEl.hidden = st.items.length === 0;
    replace(countEl, st.loaded ? fmtInt(st.items.length) + (st.next !== "0" ? "+" : "") : "…");
    const parts = [];
    if (st.loaded && !st.items.length) parts.push(h("div", { class: "empty small" }, empty));
    if (st.next !== "0") parts.push(h("button", { type: "button", class: "more", onclick: more }, "Load more"));
    replace(foot, parts);
  }
  async function more() {
    if (st.busy) return;
    st.busy = true;
    try {
      const res = await load(st.next, PAGE);
      st.items = st.items.concat(res.items);
      st.next = res.cursor;
      render();
    } catch (e) {
      showError(e);
    } finally {
      st.busy = false;
    }
  }
  async function refresh() {
    if (st.busy) return;
    st.busy = true;
    try {
      const res = await load("0", Math.min(1000, Math.max(PAGE, st.items.length)));
      st.items = res.items;
      st.next = res.cursor;
      st.loaded = true;
      render();
    } finally {
      st.busy = false;
    }
  }
  function reset() {
    st.items = [];
    st.next = "0";
    st.loaded = false;
    render();
  }
  render();
  return { el, refresh, reset, rerender: render };
}

// queueSections: the in-flight, dead-letter and ready tables, with actions.
function queueSections(db, key, ctx) {
  const armed = new Map(); // id -> timer: DELETE asks to be pressed twice
  const pending = new Set(); // ids with an action on its way

  async function act(kind, id) {
    pending.add(id);
    dead.rerender();
    try {
      await post(`api/queue/${kind}`, { db, key, id });
      toast(kind === "retry" ? `Job ${id} moved back to ready` : `Job ${id} deleted`);
    } catch (e) {
      toast(errorText(e), "bad");
    } finally {
      pending.delete(id);
      ctx.refreshNow();
    }
  }

  function deleteClicked(id) {
    if (armed.has(id)) {
      clearTimeout(armed.get(id));
      armed.delete(id);
      act("delete", id);
      return;
    }
    armed.set(id, setTimeout(() => {
      armed.delete(id);
      dead.rerender();
    }, 5000));
    dead.rerender();
  }

  const inflight = pagedTable({
    id: "inflight",
    title: "In flight",
    cols: [["Job", 0], ["Consumer", 0], ["Attempt", 1], ["Lease left", 1], ["Receipt", 0]],
    load: async (cursor, count) => {
      const r = await api("api/queue/inflight", { db, key, cursor, count });
      return { cursor: r.cursor ?? "0", items: r.jobs || [] };
    },
    row: (j) => h("tr", { dataset: { id: j.id } },
      h("td", { class: "mono", dataset: { col: "id" } }, j.id),
      h("td", { dataset: { col: "consumer" } }, j.consumer),
      h("td", { class: "num", dataset: { col: "attempt" } }, fmtInt(j.attempt)),
      h("td", { class: "num" + (j.lease_left_ms < 5000 ? " warn" : ""), dataset: { col: "lease_left" } }, fmtDuration(j.lease_left_ms)),
      h("td", { class: "mono muted" }, j.receipt)),
    empty: "No jobs in flight.",
  });

  const dead = pagedTable({
    id: "dead",
    title: "Dead letters",
    cols: [["Job", 0], ["Payload", 0], ["Attempts", 1], ["Reason", 0], ["", 0]],
    load: async (cursor, count) => {
      const r = await api("api/queue/dead", { db, key, cursor, count });
      return { cursor: r.cursor ?? "0", items: r.jobs || [] };
    },
    row: (j) => h("tr", { dataset: { id: j.id } },
      h("td", { class: "mono", dataset: { col: "id" } }, j.id),
      h("td", { class: "payload", title: String(j.payload ?? ""), dataset: { col: "payload" } }, truncate(j.payload)),
      h("td", { class: "num", dataset: { col: "attempt" } }, fmtInt(j.attempt)),
      h("td", { dataset: { col: "reason" } }, j.reason ?? "—",
        j.died_at ? h("span", { class: "muted", title: fmtTime(j.died_at) }, " · " + fmtAgo(j.died_at, serverNow())) : null),
      h("td", { class: "actions" },
        h("button", { type: "button", class: "small retry", disabled: pending.has(j.id), onclick: () => act("retry", j.id) }, "Retry"),
        h("button", {
          type: "button", class: "small danger delete" + (armed.has(j.id) ? " armed" : ""), disabled: pending.has(j.id),
          onclick: () => deleteClicked(j.id),
        }, armed.has(j.id) ? "Confirm delete" : "Delete"))),
    empty: "No dead jobs.",
  });

  const ready = pagedTable({
    id: "ready",
    title: "Next ready",
    cols: [["Job", 0], ["Payload", 0], ["Priority", 1], ["Attempt", 1]],
    load: async (cursor, count) => {
      const r = await api("api/queue/ready", { db, key, count: Math.min(count, PAGE) });
      return { cursor: "0", items: r.jobs || [] };
    },
    row: (j) => h("tr", { dataset: { id: j.id } },
      h("td", { class: "mono", dataset: { col: "id" } }, j.id),
      h("td", { class: "payload", title: String(j.payload ?? "") }, truncate(j.payload)),
      h("td", { class: "num" }, fmtInt(j.priority)),
      h("td", { class: "num" }, fmtInt(j.attempt))),
    empty: "No ready jobs.",
  });

  return [dead, inflight, ready];
}

function numpoolSections(db, key) {
  let state = "";
  const select = h("select", { id: "state-filter", "aria-label": "state", class: "inline", onchange: () => {
    state = select.value;
    numbers.reset();
    numbers.refresh().catch(showError);
  } }, ["", "nodata", "idle+up", "idle+down", "busy+up", "busy+down"].map((s) => h("option", { value: s }, s || "every state")));
  const numbers = pagedTable({
    id: "numbers",
    title: "Numbers",
    cols: [["Number", 0], ["State", 0]],
    load: async (cursor, count) => {
      const r = await api("api/numpool/numbers", { db, key, cursor, count, state });
      return { cursor: r.cursor ?? "0", items: r.numbers || [] };
    },
    row: (x) => h("tr", { dataset: { number: x.number } },
      h("td", { class: "mono", dataset: { col: "number" } }, x.number),
      h("td", { dataset: { col: "state" } }, h("span", { class: "state s-" + String(x.state).replace("+", "-") }, x.state))),
    empty: "No numbers in this state.",
    controls: select,
  });
  return [numbers];
}

function delaySections(db, key) {
  const timers = pagedTable({
    id: "timers",
    title: "Next timers",
    cols: [["Member", 0], ["Due", 1], ["At", 1]],
    load: async (cursor, count) => {
      const offset = Number(cursor) || 0;
      const r = await api("api/delay/timers", { db, key, offset, count });
      const items = r.timers || [];
      return { cursor: items.length < count ? "0" : String(offset + items.length), items };
    },
    row: (t) => {
      const d = t.due - serverNow();
      return h("tr", { dataset: { member: t.member } },
        h("td", { class: "mono", dataset: { col: "member" } }, t.member),
        h("td", { class: "num" + (d < 0 ? " warn" : ""), dataset: { col: "due" } }, fmtDue(t.due, serverNow())),
        h("td", { class: "num muted" }, fmtTime(t.due)));
    },
    empty: "No timers.",
  });
  return [timers];
}

function roomSections(db, key) {
  const members = pagedTable({
    id: "members",
    title: "Online members",
    cols: [["User", 0]],
    load: async (cursor, count) => {
      const r = await api("api/room/members", { db, key, cursor, count });
      return { cursor: r.cursor ?? "0", items: r.members || [] };
    },
    row: (uid) => h("tr", { dataset: { uid } }, h("td", { class: "mono", dataset: { col: "uid" } }, uid)),
    empty: "Nobody online.",
  });
  return [members];
}

// summaryView: the counts at the top of a key's page.
function summaryView(type, s, rate) {
  switch (type) {
    case "queue":
      return [
        h("div", { class: "counts" },
          stat("Ready", s.ready, "ready"), stat("Delayed", s.delayed, "delayed"), stat("In flight", s.inflight, "inflight"),
          stat("Dead", s.dead, "dead", s.dead > 0 ? "bad" : "")),
        kv({
          pushed: s.pushed, acked: s.acked, nacked: s.nacked, redelivered: s.redelivered, dead_lettered: s.dead_lettered,
          expired: s.expired, stale_acks: s.stale_acks, oldest_ready_age: s.ready > 0 ? fmtDuration(s.oldest_ready_age_ms) : "—",
        }),
      ];
    case "numpool":
      return [
        h("div", { class: "counts" },
          stat("Numbers", s.numbers, "numbers"), stat("Idle, up", s.idle_up, "idle_up", "good"), stat("Idle, down", s.idle_down, "idle_down"),
          stat("Busy, up", s.busy_up, "busy_up"), stat("Busy, down", s.busy_down, "busy_down")),
        kv({ calls: s.calls, lease_hangups: s.lease_hangups }),
      ];
    case "delay":
      return [
        h("div", { class: "counts" }, stat("Pending", s.pending, "pending")),
        kv({
          next_timer: s.next_member ?? "—",
          next_due: s.next_due == null ? "—" : fmtDue(s.next_due, serverNow()),
          lateness: s.late_ms > 0 ? fmtDuration(s.late_ms) : "on time",
        }),
      ];
    case "room":
      return [
        h("div", { class: "counts" },
          stat("Online", s.online, "online"), stat("UV", s.uv, "uv"), stat("Messages", s.messages, "messages"),
          stat("Pullers", s.pullers, "pullers")),
        kv({
          message_rate: rate === undefined ? "—" : fmtCompact(Number(rate.toFixed(1))) + " /s",
          important: s.important, nseq: s.nseq, iseq: s.iseq,
          presence_ttl: s.presence_ttl === undefined ? "—" : fmtDuration(s.presence_ttl), max_messages: s.max_messages,
        }),
      ];
  }
  return [kv(s)];
}

export function keyPage(app, type, db, key) {
  const fam = FAMILIES[type];
  const st = { alive: true, timer: null, prevSeq: null, rate: undefined };
  const summaryEl = h("section", { class: "card panel", id: "summary" }, h("div", { class: "loading" }, "Loading…"));
  const configEl = h("section", { class: "card panel", id: "config" }, h("h2", {}, "Settings"));
  const ctx = { refreshNow: () => tick(true) };
  const sections = { queue: queueSections, numpool: numpoolSections, delay: delaySections, room: roomSections }[type](db, key, ctx);
  const sectionsEl = h("div", { class: "sections" }, sections.map((s) => s.el));
  const missing = h("div", { class: "empty", id: "missing", hidden: true });
  const root = h("div", { class: "keypage" },
    h("div", { class: "crumbs" }, h("a", { href: `#/${type}` + (db ? `?db=${db}` : "") }, fam.title), ` / db${db} /`),
    h("h1", {}, h("span", { class: "type" }, fam.name), " ", h("span", { class: "keyname", id: "keyname" }, key)),
    missing,
    h("div", { class: "panels two" }, summaryEl, configEl),
    sectionsEl);
  app.append(root);

  async function load() {
    const res = await api("api/key", { type, db, key });
    if (!st.alive) return false;
    const s = res.summary || {};
    if (type === "room") {
      const seq = (Number(s.nseq) || 0) + (Number(s.iseq) || 0);
      const now = Date.now();
      if (st.prevSeq && now > st.prevSeq.t) st.rate = Math.max(0, ((seq - st.prevSeq.seq) * 1000) / (now - st.prevSeq.t));
      st.prevSeq = { seq, t: now };
    }
    replace(summaryEl, h("h2", {}, "Summary"), summaryView(type, s, st.rate));
    // pools and rooms have no settings of their own: the summary takes the row
    const hasConfig = res.config && Object.keys(res.config).length > 0;
    configEl.hidden = !hasConfig;
    summaryEl.parentElement.classList.toggle("two", hasConfig);
    if (hasConfig) replace(configEl, h("h2", {}, "Settings"), kv(res.config));
    return true;
  }

  async function tick(now) {
    if (now) clearTimeout(st.timer);
    if (!document.hidden || now) {
      try {
        if (await load()) {
          missing.hidden = true;
          sectionsEl.hidden = false;
          summaryEl.parentElement.hidden = false;
          await Promise.all(sections.map((s) => s.refresh()));
          clearError();
        }
      } catch (e) {
        if (!st.alive) return;
        if (e instanceof ApiError && (e.status === 404 || e.status === 409)) {
          replace(missing, e.status === 404 ? `No ${fam.name} key “${key}” in db${db}.` : e.message + ".");
          missing.hidden = false;
          sectionsEl.hidden = true;
          summaryEl.parentElement.hidden = true;
        } else {
          showError(e);
        }
      }
    }
    if (st.alive) {
      clearTimeout(st.timer);
      st.timer = setTimeout(() => tick(false), REFRESH_MS);
    }
  }
  tick(true);

  return {
    destroy() {
      st.alive = false;
      clearTimeout(st.timer);
    },
  };
}
