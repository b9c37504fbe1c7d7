// Sparklines: a small SVG line of the last minutes, scaled to its own
// maximum, no axes (the number beside it says the value).
import { h } from "./util.js";

// fromZero: the scale starts at 0 (rates); otherwise at the window's
// minimum, so a slow drift (memory) still shows.
export function sparkline(values, label, fromZero = true) {
  const W = 200, H = 40;
  const svg = h("svg:svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "spark", role: "img", "aria-label": label });
  if (values.length < 2) return svg;
  let max = Math.max(...values);
  let min = fromZero ? Math.min(...values, 0) : Math.min(...values);
  if (max === min) {
    // all zeros lie at the bottom; another flat line in the middle
    if (fromZero) max = 1;
    else {
      max += 1;
      min -= 1;
    }
  }
  const span = max - min;
  const step = W / (values.length - 1);
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(H - 2 - ((v - min) / span) * (H - 4)).toFixed(1)}`);
  svg.append(
    h("svg:polygon", { class: "spark-area", points: `0,${H} ${pts.join(" ")} ${W},${H}` }),
    h("svg:polyline", { class: "spark-line", points: pts.join(" ") }),
  );
  return svg;
}
