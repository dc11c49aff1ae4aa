// What each render a person can ask for costs, as every page says (base.html's
// "render-prices": each render kind's declared price, mangagen/render_kinds/).
import { serverData } from "./api.js";

const prices = serverData("render-prices", {});

// The credits one render of `kind` ("panel", "redo", "touch_up", "sheet") costs.
export function price(kind) {
  return prices[kind];
}
