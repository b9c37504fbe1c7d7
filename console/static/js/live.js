// The live overview: one EventSource on /events for the whole app, so the
// header's connection state and the overview's sparklines keep their
// history while the operator looks at other pages.
import { api, setServerTime, showError, clearError, ApiError, replace } from "./util.js";

const HISTORY = 300; // samples (one a second: five minutes)

export const live = {
  last: null, // the latest overview: {sections, time}
  history: [], // [{t, ops, mem}]
  listeners: new Set(),
};

let es = null;
let retryTimer = null;

function setState(state, text) {
  const el = document.getElementById("conn");
  el.className = "conn " + state;
  el.dataset.state = state;
  replace(el, text);
}

function receive(data) {
  live.last = data;
  setServerTime(data.time);
  const st = data.sections.stats || {};
  const mem = data.sections.memory || {};
  live.history.push({ t: data.time, ops: Number(st.instantaneous_ops_per_sec) || 0, mem: Number(mem.used_memory) || 0 });
  if (live.history.length > HISTORY) live.history.splice(0, live.history.length - HISTORY);
  const srv = data.sections.server || {};
  replace(document.getElementById("server-id"),
    `Revolver ${srv.revolver_version || "?"} · port ${srv.tcp_port || "?"} · ${(data.sections.replication || {}).role || ""}`);
  for (const fn of live.listeners) fn(data);
}

// connect opens the event stream. A stream the server refuses (401, 403)
// is closed by the browser for good: then the API says why, and the page
// tries again every few seconds.
export function connect() {
  clearTimeout(retryTimer);
  if (es) es.close();
  setState("connecting", "connecting…");
  es = new EventSource("events");
  es.addEventListener("open", () => {
    setState("live", "live");
    clearError();
  });
  es.addEventListener("overview", (e) => {
    try {
      receive(JSON.parse(e.data));
    } catch (err) {
      showError(err);
    }
  });
  es.addEventListener("error", (e) => {
    if (e.data !== undefined) {
      // the server's own "error" event: the stream ends, the browser reconnects
      let msg = e.data;
      try {
        msg = JSON.parse(e.data);
      } catch {
        // keep the raw text
      }
      showError(new ApiError(503, msg));
      return;
    }
    if (es.readyState === EventSource.CLOSED) {
      setState("down", "disconnected");
      api("api/overview").then(receive, showError).finally(() => {
        retryTimer = setTimeout(connect, 5000);
      });
    } else {
      setState("reconnecting", "reconnecting…");
    }
  });
}

// onOverview calls fn with every overview (and at once with the latest);
// it returns the function that stops it.
export function onOverview(fn) {
  live.listeners.add(fn);
  if (live.last) fn(live.last);
  return () => live.listeners.delete(fn);
}
