// Sparklines: a small SVG line of the last minutes, scaled to its own
// maximum, no axes (the number beside it says the value).
import { h } from "./util.js";

export function sparkline(values, label) {
  const W = 200, H = 40;
  const svg = h("svg:svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "spark", role: "img", "aria-label": label });
  if (values.length < 2) return svg;
  const max = Math.max(...values, 1);
  const min = Math.min(...values, 0);
  const span = max - min || 1;
  const step = W / (values.length - 1);
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(H - 2 - ((v - min) / span) * (H - 4)).toFixed(1)}`);
  svg.append(
    h("svg:polygon", { class: "spark-area", points: `0,${H} ${pts.join(" ")} ${W},${H}` }),
    h("svg:polyline", { class: "spark-line", points: pts.join(" ") }),
  );
  return svg;
}
