// The overview: the server's vital signs from INFO, live from /events.
import { h, replace, fmtInt, fmtCompact, fmtBytes, fmtDuration, fmtAgo, serverNow } from "./util.js";
import { live, onOverview } from "./live.js";
import { sparkline } from "./spark.js";

// kv is a small two-column table of labelled values.
function kv(rows) {
  return h("table", { class: "kv" }, h("tbody", {}, rows.filter(Boolean).map(([label, value, col]) =>
    h("tr", {}, h("th", {}, label), h("td", { class: "num", dataset: col ? { col } : undefined }, value)))));
}

function card(title, big, sub, extra, col) {
  return h("section", { class: "card stat" },
    h("div", { class: "stat-title" }, title),
    h("div", { class: "stat-big", dataset: { col } }, big),
    extra,
    h("div", { class: "stat-sub" }, sub));
}

function panel(title, body, href) {
  return h("section", { class: "card panel" },
    h("h2", {}, href ? h("a", { href }, title) : title), body);
}

// keyspace parses INFO's "keys=4,expires=0,avg_ttl=0" fields.
function keyspace(sec) {
  const dbs = [];
  for (const [name, v] of Object.entries(sec || {})) {
    const m = /^db(\d+)$/.exec(name);
    if (!m) continue;
    const f = Object.fromEntries(v.split(",").map((p) => p.split("=")));
    dbs.push({ db: Number(m[1]), keys: Number(f.keys) || 0, expires: Number(f.expires) || 0, avgTTL: Number(f.avg_ttl) || 0 });
  }
  return dbs.sort((a, b) => a.db - b.db);
}

function render(root, data) {
  const s = data.sections;
  const st = s.stats || {}, mem = s.memory || {}, cl = s.clients || {}, pers = s.persistence || {};
  const repl = s.replication || {}, srv = s.server || {};
  const dbs = keyspace(s.keyspace);
  const totalKeys = dbs.reduce((a, d) => a + d.keys, 0);
  const hits = Number(st.keyspace_hits) || 0, misses = Number(st.keyspace_misses) || 0;
  const now = serverNow();
  const persistOn = pers.aof_enabled === "1";
  const maxmem = Number(mem.maxmemory) || 0;

  const cards = h("div", { class: "cards" },
    card("Ops/s", fmtCompact(st.instantaneous_ops_per_sec),
      fmtInt(st.total_commands_processed) + " commands processed",
      sparkline(live.history.map((x) => x.ops), "ops per second, last minutes"), "ops"),
    card("Memory used", fmtBytes(mem.used_memory),
      `RSS ${fmtBytes(mem.used_memory_rss)} · max ${maxmem ? fmtBytes(maxmem) : "no limit"} (${mem.maxmemory_policy || "?"})`,
      sparkline(live.history.map((x) => x.mem), "memory used, last minutes", false), "memory"),
    card("Clients", fmtInt(cl.connected_clients),
      `${fmtInt(cl.blocked_clients)} blocked · max ${fmtInt(cl.maxclients)}`, null, "clients"),
    card("Keys", fmtCompact(totalKeys),
      `${fmtInt(st.expired_keys)} expired · hit rate ${hits + misses ? ((100 * hits) / (hits + misses)).toFixed(1) + "%" : "—"}`,
      null, "keys"),
  );

  const persistence = persistOn
    ? kv([
      ["Persistence", "on (" + (pers.persistence || "log") + ")", "persistence"],
      ["Apply lag", `${fmtInt(pers.store_apply_lag_records)} records · ${fmtBytes(pers.store_apply_lag_bytes)}`, "apply-lag"],
      ["Log records", fmtInt(pers.store_records)],
      ["Fsyncs", fmtInt(pers.store_fsyncs) + " (" + (pers.appendfsync || "?") + ")"],
      ["Last save", fmtAgo(Number(pers.rdb_last_save_time) * 1000, now)],
      ["Changes since", fmtInt(pers.rdb_changes_since_last_save)],
      ["Last write", pers.aof_last_write_status || "—"],
    ])
    : kv([["Persistence", "off (memory only)", "persistence"], ["Last save", fmtAgo(Number(pers.rdb_last_save_time) * 1000, now)]]);

  const replication = kv([
    ["Role", repl.role || "—", "role"],
    repl.role === "slave" ? ["Master", `${repl.master_host}:${repl.master_port} (${repl.master_link_status})`] : ["Replicas", fmtInt(repl.connected_slaves)],
    ["Offset", fmtInt(repl.master_repl_offset)],
    ["Backlog", fmtBytes(repl.repl_backlog_size)],
  ]);

  const server = kv([
    ["Version", `${srv.revolver_version || "?"} (Redis ${srv.redis_version || "?"})`],
    ["Uptime", fmtDuration(Number(srv.uptime_in_seconds) * 1000)],
    ["Port", srv.tcp_port || "—"],
    ["Process", srv.process_id || "—"],
    ["Go", srv.go_version || "—"],
  ]);

  const keyspaceTable = dbs.length
    ? h("table", { class: "grid compact" },
      h("thead", {}, h("tr", {}, h("th", {}, "DB"), h("th", { class: "num" }, "Keys"), h("th", { class: "num" }, "Expires"), h("th", { class: "num" }, "Avg TTL"))),
      h("tbody", {}, dbs.map((d) => h("tr", { dataset: { db: d.db } },
        h("td", {}, "db" + d.db), h("td", { class: "num" }, fmtInt(d.keys)), h("td", { class: "num" }, fmtInt(d.expires)),
        h("td", { class: "num" }, d.avgTTL ? fmtDuration(d.avgTTL) : "—")))))
    : h("div", { class: "empty small" }, "No keys");

  const dl = s.delay || {}, q = s.queue || {}, np = s.numpool || {}, rm = s.room || {};
  const families = h("div", { class: "panels four" },
    panel("Delay", kv([
      ["Keys", fmtInt(dl.delay_keys), "delay-keys"],
      ["Timers pending", fmtInt(dl.delay_timers_pending), "delay-pending"],
      ["Leased", fmtInt(dl.delay_timers_leased)],
      ["Fired", fmtInt(dl.delay_fired)],
      ["Lateness p99", fmtDuration(Number(dl.delay_lateness_p99_usec) / 1000)],
    ]), "#/delay"),
    panel("Queues", kv([
      ["Keys", fmtInt(q.queue_keys), "queue-keys"],
      ["Ready", fmtInt(q.queue_jobs_ready), "queue-ready"],
      ["Delayed", fmtInt(q.queue_jobs_delayed)],
      ["In flight", fmtInt(q.queue_jobs_inflight), "queue-inflight"],
      ["Dead", fmtInt(q.queue_jobs_dead), "queue-dead"],
      ["Delivered", fmtInt(q.queue_delivered)],
      ["Wait p99", fmtDuration(Number(q.queue_wait_p99_usec) / 1000)],
    ]), "#/queue"),
    panel("Number pools", kv([
      ["Keys", fmtInt(np.numpool_keys), "numpool-keys"],
      ["Idle, up", fmtInt(np.numpool_idle_up), "numpool-idle-up"],
      ["Idle, down", fmtInt(np.numpool_idle_down)],
      ["Busy, up", fmtInt(np.numpool_busy_up), "numpool-busy-up"],
      ["Busy, down", fmtInt(np.numpool_busy_down)],
      ["Calls", fmtInt(np.numpool_calls)],
      ["None free", fmtInt(np.numpool_calls_none_free)],
    ]), "#/numpool"),
    panel("Rooms", kv([
      ["Keys", fmtInt(rm.room_keys), "room-keys"],
      ["Online", fmtInt(rm.room_online), "room-online"],
      ["Published", fmtInt(rm.room_published)],
      ["Important", fmtInt(rm.room_published_important)],
      ["Pulls", fmtInt(rm.room_pulls)],
      ["Pulls held", fmtInt(rm.room_pulls_held)],
    ]), "#/room"),
  );

  replace(root,
    h("h1", {}, "Overview"),
    cards,
    h("div", { class: "panels four" },
      panel("Persistence", persistence), panel("Replication", replication), panel("Server", server), panel("Keyspace", keyspaceTable)),
    h("h2", { class: "section" }, "Native families"),
    families);
}

export function overviewPage(app) {
  const root = h("div", { class: "overview" }, h("h1", {}, "Overview"), h("div", { class: "loading" }, "Waiting for the server…"));
  app.append(root);
  const stop = onOverview((data) => render(root, data));
  return { destroy: stop };
}
