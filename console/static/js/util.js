// Shared helpers: DOM building (text only, never HTML), number and time
// formatting, and the JSON API client.

// h builds an element. attrs: plain attributes, plus "class", "on<event>"
// handlers and "dataset". Children are nodes or strings; strings always
// become text nodes, so data from the server is never parsed as HTML.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

const intFmt = new Intl.NumberFormat("en-US");

// fmtInt: 1234567 -> "1,234,567"; missing values show as a dash.
export function fmtInt(n) {
  if (n === undefined || n === null || n === "" || Number.isNaN(Number(n))) return "—";
  return intFmt.format(Number(n));
}

// fmtCompact: 12345 -> "12.3k", 4500000 -> "4.5M".
export function fmtCompact(n) {
  if (n === undefined || n === null || n === "" || Number.isNaN(Number(n))) return "—";
  n = Number(n);
  const a = Math.abs(n);
  if (a < 1000) return Number.isInteger(n) ? String(n) : n.toFixed(1);
  for (const [div, unit] of [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]]) {
    if (a >= div) {
      const v = n / div;
      return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) + unit;
    }
  }
  return String(n);
}

// fmtBytes: 1468006 -> "1.4 MB" (powers of 1024, as INFO's _human fields).
export function fmtBytes(n) {
  if (n === undefined || n === null || n === "" || Number.isNaN(Number(n))) return "—";
  n = Number(n);
  if (n < 1024) return n + " B";
  const units = ["KB", "MB", "GB", "TB", "PB"];
  let i = -1;
  do {
    n /= 1024;
    i++;
  } while (n >= 1024 && i < units.length - 1);
  return (n >= 100 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
}

// fmtDuration: milliseconds as a person reads them: "340 ms", "4.2 s",
// "3 min 20 s", "2 h 5 min", "3 d 4 h".
export function fmtDuration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(Number(ms))) return "—";
  ms = Math.abs(Number(ms));
  if (ms < 1000) return Math.round(ms) + " ms";
  const s = ms / 1000;
  if (s < 60) return (s < 10 ? s.toFixed(1) : Math.round(s)) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min " + Math.floor(s % 60) + " s";
  const hr = Math.floor(m / 60);
  if (hr < 48) return hr + " h " + (m % 60) + " min";
  return Math.floor(hr / 24) + " d " + (hr % 24) + " h";
}

// fmtDue: a due time relative to now: "in 4.2 s" or "3.0 s late".
export function fmtDue(dueMs, nowMs) {
  if (dueMs === undefined || dueMs === null) return "—";
  const d = dueMs - nowMs;
  return d >= 0 ? "in " + fmtDuration(d) : fmtDuration(-d) + " late";
}

// fmtAgo: a past unix-ms time: "12 s ago".
export function fmtAgo(tMs, nowMs) {
  if (!tMs) return "never";
  const d = nowMs - tMs;
  return d >= 0 ? fmtDuration(d) + " ago" : "in " + fmtDuration(-d);
}

// fmtTime: a unix-ms time as local date and time.
export function fmtTime(tMs) {
  if (!tMs) return "—";
  const d = new Date(Number(tMs));
  const pad = (x, n = 2) => String(x).padStart(n, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

// clock keeps the server's time: the page's relative times ("in 4 s")
// are right even when the browser's clock is off.
let skew = 0;
export function setServerTime(serverMs) {
  if (typeof serverMs === "number") skew = serverMs - Date.now();
}
export function serverNow() {
  return Date.now() + skew;
}

// ApiError is an API reply with a 4xx/5xx status; message is the server's.
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function reply(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    // not JSON (a proxy's page, a cut connection): the status says enough
  }
  if (!res.ok) {
    const msg = body && typeof body.error === "string" ? body.error : res.statusText || "request failed";
    throw new ApiError(res.status, msg);
  }
  return body;
}

function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

// api GETs a JSON endpoint ("api/keys") with query parameters.
export async function api(path, params) {
  let res;
  try {
    res = await fetch(url(path, params), { headers: { Accept: "application/json" }, cache: "no-store" });
  } catch (e) {
    throw new ApiError(0, "cannot reach the server (" + e.message + ")");
  }
  return reply(res);
}

// post sends an action as a form, with the header the server requires of
// every action (a cross-site form cannot set it).
export async function post(path, form) {
  let res;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: { "X-Revolver-Console": "1", Accept: "application/json" },
      body: new URLSearchParams(form),
    });
  } catch (e) {
    throw new ApiError(0, "cannot reach the server (" + e.message + ")");
  }
  return reply(res);
}

// errorText words an API error for a person.
export function errorText(err) {
  if (err instanceof ApiError) {
    if (err.status === 401) {
      return "Credentials needed: this server has a password. Reload the page and sign in " +
        "(user name and password, or user \"default\" with requirepass).";
    }
    if (err.status === 0) return "Cannot reach the server: " + err.message;
    return `Error ${err.status}: ${err.message}`;
  }
  return "Error: " + (err && err.message ? err.message : String(err));
}

// The banner at the top of every page shows the latest API error.
export function showError(err) {
  const b = document.getElementById("banner");
  replace(b, errorText(err));
  b.hidden = false;
}

export function clearError() {
  const b = document.getElementById("banner");
  if (!b.hidden) {
    b.hidden = true;
    b.replaceChildren();
  }
}

// toast shows a short notice (an action's result) for a few seconds.
export function toast(text, kind = "ok") {
  const box = document.getElementById("toasts");
  const t = h("div", { class: "toast " + kind, role: "status" }, text);
  box.append(t);
  setTimeout(() => t.remove(), 4000);
}

// num is a right-aligned number cell.
export function num(value, fmt = fmtInt, col) {
  return h("td", { class: "num", dataset: col ? { col } : undefined }, fmt(value));
}

// cell is a text cell.
export function cell(value, col, cls) {
  return h("td", { class: cls, dataset: col ? { col } : undefined }, value);
}

// table builds a table: cols are [label, numeric?] pairs.
export function table(cols, rows, cls = "") {
  return h("table", { class: "grid " + cls },
    h("thead", {}, h("tr", {}, cols.map(([label, numeric]) => h("th", { class: numeric ? "num" : undefined }, label)))),
    h("tbody", {}, rows));
}

// keyHref is a key page's address.
export function keyHref(type, db, key) {
  return `#/${type}/${db}/${encodeURIComponent(key)}`;
}
