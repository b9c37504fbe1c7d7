// A family's keys: found with SCAN ... TYPE (GET /api/keys), a page at a
// time, never KEYS. Each request is one segment of the walk (its start
// cursor, where it ended, what it found); the rows refresh every 2 s by
// asking for each segment again.
import { h, replace, api, fmtInt, fmtDuration, fmtDue, fmtCompact, serverNow, showError, clearError, keyHref } from "./util.js";
import { live } from "./live.js";

const PAGE = 50;
const REFRESH_MS = 2000;
const REFRESH_SEGMENTS = 10;

function late(ms) {
  return ms > 0 ? h("span", { class: "warn" }, fmtDuration(ms) + " late") : h("span", { class: "muted" }, "on time");
}

function n(v, col, cls) {
  return h("td", { class: "num" + (cls ? " " + cls : ""), dataset: { col } }, fmtInt(v));
}

// FAMILIES: each family's title, command prefix and columns.
export const FAMILIES = {
  delay: {
    title: "Delay",
    name: "DELAY",
    what: "timers",
    cols: [["Pending", 1], ["Next timer", 0], ["Next due", 1], ["Lateness", 1]],
    cells: (s) => [
      n(s.pending, "pending"),
      h("td", { class: "mono", dataset: { col: "next_member" } }, s.next_member ?? "—"),
      h("td", { class: "num", dataset: { col: "next_due" } }, s.next_due == null ? "—" : fmtDue(s.next_due, serverNow())),
      h("td", { class: "num", dataset: { col: "late" } }, late(s.late_ms)),
    ],
  },
  queue: {
    title: "Queues",
    name: "QUEUE",
    what: "jobs",
    cols: [["Ready", 1], ["Delayed", 1], ["In flight", 1], ["Dead", 1], ["Pushed", 1], ["Acked", 1], ["Oldest ready", 1]],
    cells: (s) => [
      n(s.ready, "ready"), n(s.delayed, "delayed"), n(s.inflight, "inflight"), n(s.dead, "dead", s.dead > 0 ? "bad" : ""),
      n(s.pushed, "pushed"), n(s.acked, "acked"),
      h("td", { class: "num", dataset: { col: "oldest_ready_age" } }, s.ready > 0 ? fmtDuration(s.oldest_ready_age_ms) : "—"),
    ],
  },
  numpool: {
    title: "Number pools",
    name: "NUMPOOL",
    what: "numbers",
    cols: [["Numbers", 1], ["Idle, up", 1], ["Idle, down", 1], ["Busy, up", 1], ["Busy, down", 1], ["Calls", 1], ["Lease hang-ups", 1]],
    cells: (s) => [
      n(s.numbers, "numbers"), n(s.idle_up, "idle_up"), n(s.idle_down, "idle_down"), n(s.busy_up, "busy_up"),
      n(s.busy_down, "busy_down"), n(s.calls, "calls"), n(s.lease_hangups, "lease_hangups"),
    ],
  },
  room: {
    title: "Rooms",
    name: "ROOM",
    what: "rooms",
    cols: [["Online", 1], ["UV", 1], ["Messages", 1], ["Msg/s", 1], ["Pullers", 1], ["Important", 1]],
    cells: (s, rate) => [
      n(s.online, "online"), n(s.uv, "uv"), n(s.messages, "messages"),
      h("td", { class: "num", dataset: { col: "rate" } }, rate === undefined ? "—" : fmtCompact(Number(rate.toFixed(1)))),
      n(s.pullers, "pullers"), n(s.important, "important"),
    ],
  },
};

// dbChoices: db 0, the dbs INFO keyspace shows with keys, and the current.
function dbChoices(current) {
  const dbs = new Map([[0, 0]]);
  for (const [name, v] of Object.entries(live.last?.sections.keyspace || {})) {
    const m = /^db(\d+)$/.exec(name);
    const k = /keys=(\d+)/.exec(v);
    if (m) dbs.set(Number(m[1]), k ? Number(k[1]) : 0);
  }
  if (!dbs.has(current)) dbs.set(current, 0);
  return [...dbs.entries()].sort((a, b) => a[0] - b[0]);
}

export function listPage(app, type, params) {
  const fam = FAMILIES[type];
  const db = Number(params.get("db") || 0);
  if (!Number.isInteger(db) || db < 0) throw new Error("bad database number in the address");
  const match = params.get("match") || "";
  const st = { alive: true, loading: false, stop: false, segments: [], scanned: 0, rates: new Map(), seqs: new Map() };

  const go = (ndb, nmatch) => {
    const q = new URLSearchParams();
    if (ndb) q.set("db", ndb);
    if (nmatch) q.set("match", nmatch);
    const s = q.toString();
    location.hash = `#/${type}` + (s ? "?" + s : "");
  };

  const dbSelect = h("select", { id: "db", "aria-label": "database", onchange: () => go(Number(dbSelect.value), matchInput.value) });
  const fillDbs = () => {
    replace(dbSelect, dbChoices(db).map(([d, keys]) =>
      h("option", { value: d, selected: d === db }, `db${d}` + (keys ? ` (${fmtCompact(keys)} keys)` : ""))));
  };
  fillDbs();
  const matchInput = h("input", { id: "match", type: "search", placeholder: "MATCH pattern, e.g. orders:*", value: match, spellcheck: "false" });
  const form = h("form", { class: "controls", onsubmit: (e) => { e.preventDefault(); go(db, matchInput.value); } },
    h("label", {}, "Database ", dbSelect),
    h("label", { class: "grow" }, "Keys ", matchInput),
    h("button", { type: "submit" }, "Filter"),
    h("button", { type: "button", class: "secondary", onclick: () => restart() }, "Reload"));

  const tbody = h("tbody", {});
  const tableEl = h("table", { class: "grid keys", id: "keys" },
    h("thead", {}, h("tr", {}, h("th", {}, "Key"), fam.cols.map(([label, numeric]) => h("th", { class: numeric ? "num" : undefined }, label)))),
    tbody);
  const status = h("div", { class: "list-status", id: "list-status" });
  const root = h("div", { class: "list" },
    h("h1", {}, fam.title, h("span", { class: "sub" }, ` ${fam.name} keys in db${db}` + (match ? ` matching “${match}”` : ""))),
    form, tableEl, status);
  app.append(root);

  const done = () => st.segments.length > 0 && st.segments[st.segments.length - 1].next === "0";

  function rows() {
    const seen = new Map();
    for (const seg of st.segments) for (const k of seg.keys) if (!seen.has(k.key)) seen.set(k.key, k);
    return [...seen.values()];
  }

  function render() {
    const keys = rows();
    replace(tbody, keys.map((k) => h("tr", { dataset: { key: k.key } },
      h("td", { class: "key", dataset: { col: "key" } }, h("a", { href: keyHref(type, db, k.key) }, k.key)),
      fam.cells(k.summary || {}, st.rates.get(k.key)))));
    tableEl.hidden = keys.length === 0;
    const parts = [];
    if (keys.length === 0 && done()) {
      parts.push(h("div", { class: "empty", id: "empty" },
        `No ${fam.name} keys in db${db}` + (match ? ` matching “${match}”` : "") + "."));
    }
    if (st.loading) {
      parts.push(h("span", { class: "progress" }, `Scanning… ${fmtInt(st.scanned)} keys scanned, ${fmtInt(keys.length)} found`),
        h("button", { type: "button", class: "secondary", onclick: () => { st.stop = true; } }, "Stop"));
    } else if (st.segments.length && !done()) {
      parts.push(h("span", { class: "progress" }, `${fmtInt(keys.length)} keys shown, ${fmtInt(st.scanned)} keys scanned so far`),
        h("button", { type: "button", id: "more", onclick: () => loadMore() }, "Load more"));
    } else if (keys.length) {
      parts.push(h("span", { class: "progress" }, `${fmtInt(keys.length)} ${keys.length === 1 ? "key" : "keys"}, the whole keyspace scanned (${fmtInt(st.scanned)} keys)`));
    }
    replace(status, parts);
  }

  // noteRates computes rooms' message rates from their sequence numbers'
  // growth between two refreshes.
  function noteRates(keys) {
    if (type !== "room") return;
    const now = Date.now();
    for (const k of keys) {
      const seq = (Number(k.summary?.nseq) || 0) + (Number(k.summary?.iseq) || 0);
      const prev = st.seqs.get(k.key);
      if (prev && now > prev.t) st.rates.set(k.key, Math.max(0, ((seq - prev.seq) * 1000) / (now - prev.t)));
      st.seqs.set(k.key, { seq, t: now });
    }
  }

  async function loadMore() {
    if (st.loading || done()) return;
    st.loading = true;
    st.stop = false;
    render();
    let found = 0;
    let cursor = st.segments.length ? st.segments[st.segments.length - 1].next : "0";
    try {
      while (st.alive && !st.stop) {
        const req = PAGE - found;
        const res = await api("api/keys", { type, db, cursor, count: req, match });
        if (!st.alive) return;
        st.segments.push({ start: cursor, next: res.cursor, req, keys: res.keys || [] });
        st.scanned += Number(res.scanned) || 0;
        found += (res.keys || []).length;
        noteRates(res.keys || []);
        cursor = res.cursor;
        clearError();
        if (cursor === "0" || found >= PAGE) break;
        render();
      }
    } catch (e) {
      if (st.alive) showError(e);
    } finally {
      st.loading = false;
      if (st.alive) render();
    }
  }

  async function refresh() {
    if (st.loading || document.hidden) return;
    try {
      // the first segments with rows: a list paged far down refreshes its
      // top, and the server is not asked to walk the whole keyspace again
      // every 2 s
      for (const seg of st.segments.filter((s) => s.keys.length).slice(0, REFRESH_SEGMENTS)) {
        const res = await api("api/keys", { type, db, cursor: seg.start, count: seg.req, match });
        if (!st.alive || st.loading) return;
        const fresh = res.keys || [];
        noteRates(fresh);
        if (res.cursor === seg.next) {
          seg.keys = fresh;
        } else {
          // the walk stopped elsewhere (time ran out, keys came and went):
          // update the rows it found again, keep the others
          const byKey = new Map(fresh.map((k) => [k.key, k]));
          seg.keys = seg.keys.map((k) => byKey.get(k.key) || k);
        }
      }
      clearError();
    } catch (e) {
      if (st.alive) showError(e);
    }
    if (st.alive) {
      fillDbs();
      render();
    }
  }

  function restart() {
    st.stop = true;
    const wait = () => {
      if (st.loading) return setTimeout(wait, 20);
      st.segments = [];
      st.scanned = 0;
      loadMore();
    };
    wait();
  }

  let timer = null;
  const tick = async () => {
    // a first load that failed (server down, 401) is tried again
    if (st.segments.length === 0) await loadMore();
    else await refresh();
    if (st.alive) timer = setTimeout(tick, REFRESH_MS);
  };
  loadMore().then(() => {
    if (st.alive) timer = setTimeout(tick, REFRESH_MS);
  });

  return {
    destroy() {
      st.alive = false;
      clearTimeout(timer);
    },
  };
}
