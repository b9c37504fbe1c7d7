// The console's router: hash routes, so the server serves one page.
//   #/                      overview
//   #/queue?db=0&match=x*   a family's keys
//   #/queue/<db>/<key>      one key (the key encodeURIComponent'd)
import { h, replace, clearError, showError } from "./util.js";
import { connect } from "./live.js";
import { overviewPage } from "./overview.js";
import { listPage, FAMILIES } from "./lists.js";
import { keyPage } from "./keypage.js";

let current = null; // the mounted page: {destroy()}

function parse(hash) {
  const raw = hash.replace(/^#/, "") || "/";
  const [path, query = ""] = raw.split("?", 2);
  const parts = path.split("/").filter((p, i) => i > 0 || p !== "");
  return { parts, params: new URLSearchParams(query) };
}

function route() {
  if (current) current.destroy();
  current = null;
  clearError();
  document.getElementById("toasts").replaceChildren();
  const app = document.getElementById("app");
  replace(app);
  const { parts, params } = parse(location.hash);
  const family = parts[0] || "";
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("active", a.dataset.route === (family || "overview"));
  }
  try {
    if (family === "" && parts.length <= 1) {
      current = overviewPage(app);
    } else if (FAMILIES[family] && parts.length === 1) {
      current = listPage(app, family, params);
    } else if (FAMILIES[family] && parts.length === 3) {
      const db = Number(parts[1]);
      const key = decodeURIComponent(parts[2]);
      if (!Number.isInteger(db) || db < 0) throw new Error("bad database number in the address");
      current = keyPage(app, family, db, key);
    } else {
      replace(app, h("div", { class: "empty" }, "No such page. ", h("a", { href: "#/" }, "Back to the overview")));
    }
  } catch (e) {
    showError(e);
  }
  document.title = (document.querySelector("#app h1")?.textContent || "Console") + " · Revolver";
}

window.addEventListener("hashchange", route);
connect();
route();
