// Touch-ups: redraw one part of a panel (a box dragged over it, or a mask painted with a
// brush), for a touch-up's price (prices.js), on the job page and in the reader. The
// result arrives live (the job the server names is followed until its panel is shown), with a before/after
// toggle and "Keep the earlier one" (the older take, chosen again for nothing).
// Keyboard: the box moves with the arrow keys, and Shift+arrows size it.
import { ApiError, api, refreshNavCredits, showOutOfCredits } from "./api.js";
import { gettext, language, ngettext } from "./i18n.js";
import { price } from "./prices.js";

const STEP = 0.02; // what one arrow key moves or sizes the box by, of the picture
const MIN = 0.02; // the smallest box side, of the picture
const POLL_MS = 500;

const stylesheet = Object.assign(document.createElement("link"), {
  rel: "stylesheet",
  href: new URL("../css/touchup.css", import.meta.url).href,
});
document.head.append(stylesheet);

const percent = new Intl.NumberFormat(language, { style: "percent", maximumFractionDigits: 0 });
// The page says when the renderer draws shapes of its own rather than the words typed.
const shapesOnly = "touchupDrawsShapes" in ((document.getElementById("job") || document.getElementById("reader"))?.dataset || {});
const clamp = (value, low, high) => Math.min(high, Math.max(low, value));

// An element: `attributes` set as they are, except `text` (its text), `classes` (a list)
// and `hidden`.
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "text") node.textContent = value;
    else if (name === "classes") node.classList.add(...value);
    else if (name === "hidden") node.hidden = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

// The editor: one dialog for the page, opened for one panel at a time.
function buildEditor() {
  const mode = (value, text, checked) => {
    const radio = el("input", { type: "radio", name: "touchup-mode", value });
    radio.checked = checked;
    return el("label", {}, radio, " ", el("span", { text }));
  };
  const dialog = el(
    "dialog",
    { classes: ["touchup"], id: "touchup", "aria-labelledby": "touchup-title" },
    el("h2", { id: "touchup-title" }),
    el("p", {
      classes: ["muted", "small"],
      id: "touchup-help",
      text: gettext(
        "Mark the part to draw again: drag a box over the picture (arrow keys move it, Shift+arrow keys size it) or paint over it. Everything outside stays as it is.",
      ),
    }),
    el(
      "div",
      { classes: ["row", "touchup-modes"], role: "radiogroup", "aria-label": gettext("How to mark it") },
      mode("box", gettext("Drag a box"), true),
      mode("brush", gettext("Paint with a brush"), false),
      el(
        "label",
        { classes: ["touchup-brush-size"], hidden: true },
        el("span", { text: gettext("Brush size") }),
        " ",
        el("input", { type: "range", id: "touchup-brush", min: "4", max: "80", value: "24" }),
      ),
      el("button", { type: "button", classes: ["link"], id: "touchup-clear", hidden: true, text: gettext("Clear the painting") }),
    ),
    el(
      "div",
      { classes: ["touchup-stage"], id: "touchup-stage" },
      el("img", { id: "touchup-picture", alt: "", draggable: "false" }),
      el("canvas", { id: "touchup-paint", hidden: true }),
      el("div", {
        classes: ["touchup-box"],
        id: "touchup-box",
        tabindex: "0",
        role: "group",
        "aria-label": gettext("The part to redraw: arrow keys move it, Shift+arrow keys size it"),
      }),
    ),
    // The offline renderer redraws the part with shapes of its own: it cannot read words.
    el("p", {
      classes: ["notice", "small"],
      id: "touchup-shapes",
      hidden: !shapesOnly,
      text: gettext(
        "This server draws offline: it redraws the marked part with shapes of its own, not the words you type.",
      ),
    }),
    el(
      "label",
      { classes: ["touchup-prompt"] },
      el("span", { text: gettext("What to draw there") }),
      el("input", { type: "text", id: "touchup-prompt", maxlength: "1000", autocomplete: "off" }),
    ),
    el("p", { classes: ["form-error"], id: "touchup-error", role: "alert", hidden: true }),
    el("p", { classes: ["muted", "small"], id: "touchup-status", role: "status", "aria-live": "polite" }),
    el(
      "div",
      { classes: ["row", "touchup-actions"] },
      el("button", { type: "button", classes: ["primary-inline"], id: "touchup-go", text: ngettext("Redraw this part — %(count)s credit", "Redraw this part — %(count)s credits", price("touch_up")) }),
      el("button", { type: "button", id: "touchup-toggle", "aria-pressed": "false", hidden: true }),
      el("button", { type: "button", id: "touchup-keep-earlier", hidden: true, text: gettext("Keep the earlier one") }),
      el("button", { type: "button", classes: ["link"], id: "touchup-close", text: gettext("Close") }),
    ),
  );
  document.body.append(dialog);
  return dialog;
}

class Editor {
  constructor({ onChange }) {
    this.dialog = buildEditor();
    this.onChange = onChange;
    const $ = (id) => this.dialog.querySelector(`#${id}`);
    this.stage = $("touchup-stage");
    this.picture = $("touchup-picture");
    this.canvas = $("touchup-paint");
    this.boxNode = $("touchup-box");
    this.prompt = $("touchup-prompt");
    this.error = $("touchup-error");
    this.status = $("touchup-status");
    this.go = $("touchup-go");
    this.toggle = $("touchup-toggle");
    this.keepEarlier = $("touchup-keep-earlier");
    this.brush = $("touchup-brush");
    this.mode = "box";
    this.box = { x: 0.3, y: 0.3, w: 0.4, h: 0.4 };
    this.painted = false;
    this.dialog.querySelectorAll('input[name="touchup-mode"]').forEach((radio) =>
      radio.addEventListener("change", () => this.setMode(radio.value)),
    );
    $("touchup-clear").addEventListener("click", () => this.clearPaint());
    $("touchup-close").addEventListener("click", () => this.dialog.close());
    this.dialog.addEventListener("close", () => {
      this.following = null;
      if (this.changed) this.onChange(this.panel);
    });
    this.go.addEventListener("click", () => this.submit());
    this.toggle.addEventListener("click", () => this.showTake(this.toggle.getAttribute("aria-pressed") !== "true"));
    this.keepEarlier.addEventListener("click", () => this.chooseEarlier());
    this.boxNode.addEventListener("keydown", (event) => this.onKey(event));
    this.stage.addEventListener("pointerdown", (event) => this.onPointerDown(event));
    this.stage.addEventListener("pointermove", (event) => this.onPointerMove(event));
    this.stage.addEventListener("pointerup", () => this.onPointerUp());
    this.stage.addEventListener("pointercancel", () => this.onPointerUp());
  }

  open({ storyboard, index, imageUrl }) {
    this.panel = { storyboard, index };
    this.changed = false;
    this.result = null;
    this.following = null;
    this.dialog.querySelector("#touchup-title").textContent = gettext("Redraw part of panel %(index)s", { index });
    this.picture.alt = gettext("Panel %(index)s, as it is now", { index });
    this.picture.src = imageUrl;
    this.prompt.value = "";
    this.error.hidden = true;
    this.status.textContent = "";
    this.go.disabled = false;
    this.toggle.hidden = true;
    this.keepEarlier.hidden = true;
    delete this.stage.dataset.showing;
    this.clearPaint();
    this.drawBox();
    this.dialog.showModal();
    this.boxNode.focus();
  }

  setMode(mode) {
    this.mode = mode;
    const brush = mode === "brush";
    this.canvas.hidden = !brush;
    this.boxNode.hidden = brush;
    this.dialog.querySelector(".touchup-brush-size").hidden = !brush;
    this.dialog.querySelector("#touchup-clear").hidden = !brush;
    this.stage.classList.toggle("painting", brush);
    if (brush) this.sizeCanvas();
  }

  sizeCanvas() {
    const width = this.picture.naturalWidth || 1;
    const height = this.picture.naturalHeight || 1;
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.painted = false;
    }
  }

  clearPaint() {
    const context = this.canvas.getContext("2d");
    context.clearRect(0, 0, this.canvas.width, this.canvas.height);
    this.painted = false;
  }

  // Where a pointer is, as fractions of the picture.
  at(event) {
    const rect = this.picture.getBoundingClientRect();
    return {
      x: clamp((event.clientX - rect.left) / rect.width, 0, 1),
      y: clamp((event.clientY - rect.top) / rect.height, 0, 1),
    };
  }

  onPointerDown(event) {
    if (this.result || event.button !== 0) return;
    event.preventDefault();
    this.stage.setPointerCapture(event.pointerId);
    const point = this.at(event);
    this.dragging = { from: point, last: point };
    if (this.mode === "brush") this.paint(point, point);
  }

  onPointerMove(event) {
    if (!this.dragging) return;
    const point = this.at(event);
    if (this.mode === "brush") {
      this.paint(this.dragging.last, point);
    } else {
      const { from } = this.dragging;
      this.box = {
        x: Math.min(from.x, point.x),
        y: Math.min(from.y, point.y),
        w: Math.abs(point.x - from.x),
        h: Math.abs(point.y - from.y),
      };
      this.drawBox();
    }
    this.dragging.last = point;
  }

  onPointerUp() {
    if (!this.dragging) return;
    this.dragging = null;
    if (this.mode === "box") {
      this.box.w = Math.max(this.box.w, MIN);
      this.box.h = Math.max(this.box.h, MIN);
      this.box.x = clamp(this.box.x, 0, 1 - this.box.w);
      this.box.y = clamp(this.box.y, 0, 1 - this.box.h);
      this.drawBox();
      this.boxNode.focus();
    }
  }

  paint(from, to) {
    const context = this.canvas.getContext("2d");
    const scale = this.canvas.width / (this.picture.getBoundingClientRect().width || 1);
    context.strokeStyle = "#fff";
    context.lineCap = "round";
    context.lineWidth = Number(this.brush.value) * scale;
    context.beginPath();
    context.moveTo(from.x * this.canvas.width, from.y * this.canvas.height);
    context.lineTo(to.x * this.canvas.width, to.y * this.canvas.height);
    context.stroke();
    this.painted = true;
  }

  onKey(event) {
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const move = moves[event.key];
    if (!move || this.result) return;
    event.preventDefault();
    const [dx, dy] = move;
    const box = this.box;
    if (event.shiftKey) {
      box.w = clamp(box.w + dx * STEP, MIN, 1 - box.x);
      box.h = clamp(box.h + dy * STEP, MIN, 1 - box.y);
    } else {
      box.x = clamp(box.x + dx * STEP, 0, 1 - box.w);
      box.y = clamp(box.y + dy * STEP, 0, 1 - box.h);
    }
    this.drawBox();
  }

  drawBox() {
    const { x, y, w, h } = this.box;
    Object.assign(this.boxNode.style, {
      left: `${x * 100}%`,
      top: `${y * 100}%`,
      width: `${w * 100}%`,
      height: `${h * 100}%`,
    });
    this.boxNode.setAttribute(
      "aria-description",
      gettext("From %(left)s to %(right)s across, %(top)s to %(bottom)s down", {
        left: percent.format(x),
        right: percent.format(x + w),
        top: percent.format(y),
        bottom: percent.format(y + h),
      }),
    );
  }

  async body() {
    const prompt = this.prompt.value.trim();
    if (this.mode === "box") {
      const round = (v) => Math.round(v * 10000) / 10000;
      const { x, y, w, h } = this.box;
      const box = [round(x), round(y), round(Math.min(w, 1 - x)), round(Math.min(h, 1 - y))];
      return prompt ? { box, prompt } : { box };
    }
    const mask = document.createElement("canvas");
    mask.width = this.canvas.width;
    mask.height = this.canvas.height;
    const context = mask.getContext("2d");
    context.fillStyle = "#000";
    context.fillRect(0, 0, mask.width, mask.height);
    context.drawImage(this.canvas, 0, 0);
    const blob = await new Promise((resolve) => mask.toBlob(resolve, "image/png"));
    const form = new FormData();
    form.append("mask", blob, "mask.png");
    if (prompt) form.append("prompt", prompt);
    return form;
  }

  showError(err) {
    this.error.hidden = false;
    const words = {
      before: gettext("You are out of credits. "),
      link: gettext("Get more credits"),
      after: gettext(" and try again."),
    };
    if (!showOutOfCredits(err, this.error, words)) this.error.textContent = err.message;
  }

  async submit() {
    if (this.mode === "brush" && !this.painted) {
      this.showError(new Error(gettext("Paint over the part to draw again first.")));
      return;
    }
    this.go.disabled = true;
    this.error.hidden = true;
    this.status.textContent = gettext("Asking for the redraw…");
    const { storyboard, index } = this.panel;
    try {
      const answer = await api("POST", `/api/storyboards/${storyboard}/panels/${index}/touchup/`, await this.body());
      refreshNavCredits();
      await this.follow(answer);
    } catch (err) {
      this.status.textContent = "";
      this.showError(err);
      this.go.disabled = false;
    } finally {
      // The hold is counted (the take was shown) or given back (it failed): the figures
      // move again, and a finished job's page has no stream to say so.
      refreshNavCredits();
    }
  }

  // Follows the job the server named until the panel's touch-up is shown (or fails).
  async follow({ job, panel, attempt }) {
    const token = {};
    this.following = token;
    const since = Date.now();
    for (;;) {
      if (this.following !== token) return;
      const state = await api("GET", `/api/jobs/${job}/`);
      const row = state.panels.find((p) => p.index === panel);
      const seconds = Math.floor((Date.now() - since) / 1000);
      const mine = row && row.attempts >= attempt;
      if (mine && !["pending", "rendering", "ready"].includes(row.state)) {
        // Shown, or (an error kept on it) failed: a failed touch-up is never charged.
        if (row.error) throw new ApiError(409, { detail: gettext("The redraw failed; nothing was charged.") });
        break;
      }
      if (!["queued", "rendering", "awaiting_decision", "completed"].includes(state.state)) {
        throw new ApiError(409, { detail: gettext("The redraw stopped; nothing was charged.") });
      }
      this.status.textContent = gettext("Redrawing panel %(index)s… %(seconds)ss", { index: panel, seconds });
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const { takes } = await api("GET", `/api/storyboards/${this.panel.storyboard}/panels/${panel}/takes/`);
    this.result = { after: takes[0], before: takes[1] };
    this.changed = true;
    this.status.textContent = gettext("Redrawn. The earlier picture is kept: you can go back to it for free.");
    this.toggle.hidden = false;
    this.keepEarlier.hidden = !this.result.before;
    this.keepEarlier.disabled = false;
    this.showTake(false);
    this.toggle.focus();
  }

  // The touched-up take, or (`before`) the one it was drawn over.
  showTake(before) {
    const take = before ? this.result.before : this.result.after;
    if (!take) return;
    this.picture.src = take.image_url;
    this.toggle.setAttribute("aria-pressed", String(before));
    this.toggle.textContent = before ? gettext("Show after") : gettext("Show before");
    this.dialog.querySelector("#touchup-stage").dataset.showing = before ? "before" : "after";
  }

  async chooseEarlier() {
    const { storyboard, index } = this.panel;
    this.keepEarlier.disabled = true;
    try {
      await api("POST", `/api/storyboards/${storyboard}/panels/${index}/takes/${this.result.before.id}/choose/`, {});
      this.result = { after: this.result.before, before: null };
      this.showTake(false);
      this.toggle.hidden = true;
      this.keepEarlier.hidden = true;
      this.status.textContent = gettext("The earlier picture is shown again (nothing charged).");
      this.dialog.querySelector("#touchup-close").focus();
    } catch (err) {
      this.keepEarlier.disabled = false;
      this.showError(err);
    }
  }
}

function opener(label, open) {
  const button = document.createElement("button");
  button.type = "button";
  button.classList.add("touchup-open", "link");
  button.textContent = label;
  button.addEventListener("click", open);
  return button;
}

// The job page: "Touch up…" beside every panel whose picture is shown.
function onJobPage(root) {
  const storyboard = root.dataset.storyboard;
  const grid = document.getElementById("job-panels");
  const editor = new Editor({
    onChange: ({ index }) => {
      // The panel shows the take now chosen (the job's own copy may be the older one).
      api("GET", `/api/storyboards/${storyboard}/panels/${index}/takes/`).then(({ takes }) => {
        const img = grid.querySelector(`.job-panel[data-index="${index}"] .frame img`);
        if (img && takes[0]) img.src = takes[0].image_url;
      });
    },
  });
  const decorate = () => {
    grid.querySelectorAll(".job-panel").forEach((figure) => {
      const img = figure.querySelector(".frame img");
      const shown = ["delivered", "approved"].includes(figure.dataset.state) && img && !img.hidden && img.getAttribute("src");
      const existing = figure.querySelector(".touchup-open");
      if (!shown) {
        existing?.remove();
        return;
      }
      if (existing) return;
      const index = Number(figure.dataset.index);
      const label = gettext("Touch up panel %(index)s…", { index });
      figure.querySelector("figcaption").append(
        opener(label, () => editor.open({ storyboard, index, imageUrl: img.getAttribute("src") })),
      );
    });
  };
  new MutationObserver(decorate).observe(grid, { childList: true, subtree: true, attributes: true, attributeFilter: ["src", "hidden", "data-state"] });
  decorate();
}

// The reader: pick a kept panel, then the same editor over its current take.
async function inReader(root) {
  const storyboard = root.dataset.storyboard;
  const quote = await api("GET", `/api/storyboards/${storyboard}/quote/`).catch(() => null);
  if (!quote || !quote.kept.length) return;
  const section = document.createElement("div");
  section.classList.add("row", "touchup-reader");
  section.id = "touchup-reader";
  const label = document.createElement("label");
  label.append(gettext("Redraw part of a panel"), " ");
  const select = document.createElement("select");
  select.id = "touchup-panel";
  for (const index of quote.kept) {
    select.append(new Option(gettext("Panel %(index)s", { index }), String(index)));
  }
  label.append(select);
  const editor = new Editor({ onChange: () => location.reload() });
  const open = opener(gettext("Touch up…"), async () => {
    const index = Number(select.value);
    const { takes } = await api("GET", `/api/storyboards/${storyboard}/panels/${index}/takes/`);
    if (takes[0]) editor.open({ storyboard, index, imageUrl: takes[0].image_url });
  });
  open.classList.remove("link");
  section.append(label, open);
  const anchor = document.getElementById("takes") || root.lastElementChild;
  anchor.before(section);
}

const job = document.getElementById("job");
const reader = document.getElementById("reader");
if (job) onJobPage(job);
else if (reader) inReader(reader);
