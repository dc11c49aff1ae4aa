// Lettering you direct, on the job page and in the reader: a kept panel's picture with a
// handle on each balloon, on the end of its tail and on each sound effect. A person drags
// them (or selects one and moves it with the arrow keys), picks a balloon's style, adds,
// edits and deletes sound effects; each change is saved on the storyboard as it is made
// (lettering only: no render, no credit) and the picture is lettered again at once.
// "Place automatically" gives a balloon back to the lettering layer's choice.
import { api } from "./api.js";
import { gettext } from "./i18n.js";

// The strings this module adds, in one place for the interface's translation.
const STRINGS = {
  heading: gettext("Letter the panels"),
  help: gettext(
    "Drag a balloon, the end of its tail or a sound effect onto the picture, or select one and move it with the arrow keys. Each change is saved as you make it, and costs nothing.",
  ),
  panel: gettext("Panel"),
  panelOption: (index) => gettext("Panel %(index)s", { index }),
  none: gettext("No panel is drawn yet: lettering is placed on a drawn panel."),
  lines: gettext("Balloons"),
  noLines: gettext("This panel has no dialogue."),
  style: gettext("Style"),
  styles: {
    speech: gettext("Speech"),
    thought: gettext("Thought"),
    shout: gettext("Shout"),
    whisper: gettext("Whisper"),
  },
  narration: gettext("Narration"),
  auto: gettext("placed automatically"),
  placeAuto: gettext("Place automatically"),
  balloon: (n, speaker, text) => gettext("Balloon %(n)s, %(speaker)s: %(text)s", { n, speaker, text }),
  tail: (n) => gettext("End of the tail of balloon %(n)s", { n }),
  sfxHeading: gettext("Sound effects"),
  sfxText: (n) => gettext("Sound effect %(n)s", { n }),
  sfxHandle: (text) => gettext("Sound effect: %(text)s", { text }),
  sfxNew: gettext("New sound effect"),
  sfxPlaceholder: gettext("BOOM"),
  add: gettext("Add a sound effect"),
  remove: (n) => gettext("Delete sound effect %(n)s", { n }),
  removeShort: gettext("Delete"),
  saving: gettext("Saving…"),
  saved: gettext("Saved. The panel is lettered again."),
  picture: (index) => gettext("Panel %(index)s with its lettering", { index }),
};
const STYLES = ["speech", "thought", "shout", "whisper"];
const SFX_DEFAULT = { size: 0.14, angle: 0 };
const STEP = 0.01; // an arrow key's move, a fraction of the panel (with Shift: five times)

const host = document.getElementById("job") || document.getElementById("reader");
if (host && host.dataset.storyboard) start(host);

function element(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const clamp = (v) => Math.min(1, Math.max(0, Math.round(v * 1000) / 1000));

function start(host) {
  const id = host.dataset.storyboard;
  const sheet = element("link", { rel: "stylesheet", href: new URL("../css/lettering.css", import.meta.url).href });
  document.head.append(sheet);

  const select = element("select", { id: "lettering-panel" });
  const image = element("img", { id: "lettering-image", alt: "" });
  const handles = element("div", { className: "lettering-handles" });
  const stage = element("figure", { className: "lettering-stage", id: "lettering-stage" }, image, handles);
  const lines = element("ol", { id: "lettering-lines", className: "lettering-lines" });
  const effects = element("ul", { id: "lettering-sfx", className: "lettering-sfx" });
  const newText = element("input", {
    id: "lettering-sfx-text",
    maxLength: 40,
    placeholder: STRINGS.sfxPlaceholder,
  });
  newText.setAttribute("aria-label", STRINGS.sfxNew);
  const addForm = element(
    "form",
    { id: "lettering-add-sfx", className: "row" },
    newText,
    element("button", { type: "submit", id: "lettering-add", textContent: STRINGS.add }),
  );
  const status = element("p", { id: "lettering-status", className: "muted small" });
  status.setAttribute("role", "status");
  const empty = element("p", { id: "lettering-none", className: "muted", textContent: STRINGS.none, hidden: true });
  const body = element(
    "div",
    { className: "lettering-body", id: "lettering-body", hidden: true },
    stage,
    element(
      "div",
      { className: "lettering-controls" },
      element("h3", { textContent: STRINGS.lines }),
      lines,
      element("h3", { textContent: STRINGS.sfxHeading }),
      effects,
      addForm,
    ),
  );
  const section = element(
    "details",
    { className: "card lettering", id: "lettering" },
    element("summary", { textContent: STRINGS.heading }),
    element("p", { className: "muted small", textContent: STRINGS.help }),
    element("label", {}, `${STRINGS.panel} `, select),
    empty,
    body,
    status,
  );
  // Below the panels (the job page) or the pages (the reader).
  const before = document.getElementById("done") || document.getElementById("takes");
  if (before) before.before(section);
  else host.append(section);

  let storyboard = null;
  let index = null;
  let saving = Promise.resolve();
  let keyTimer = null;

  const panelData = () => storyboard.panels.find((p) => p.index === index);

  async function refreshPanels() {
    const [quote, fresh] = await Promise.all([
      api("GET", `/api/storyboards/${id}/quote/`),
      api("GET", `/api/storyboards/${id}/`),
    ]);
    storyboard = fresh;
    const kept = quote.kept;
    const chosen = kept.includes(index) ? index : kept[0] ?? null;
    select.replaceChildren(...kept.map((i) => new Option(STRINGS.panelOption(i), String(i), false, i === chosen)));
    empty.hidden = kept.length > 0;
    body.hidden = kept.length === 0;
    if (chosen !== null) await show(chosen);
  }

  async function show(chosen) {
    index = chosen;
    const answer = await api("GET", `/api/storyboards/${id}/panels/${index}/takes/`);
    const take = answer.takes.find((t) => t.current) || answer.takes[0];
    stage.dataset.base = take ? take.image_url : "";
    stage.dataset.index = String(index);
    image.alt = STRINGS.picture(index);
    repaint();
    draw();
  }

  // The picture lettered with the panel's current text (the address changes with it).
  function repaint() {
    const panel = panelData();
    if (!panel || !stage.dataset.base) return;
    const url = `${stage.dataset.base}?lettering=${panel.content_hash.slice(0, 16)}`;
    if (image.getAttribute("src") !== url) {
      stage.setAttribute("aria-busy", "true");
      image.src = url;
    }
    // The job page's own tile of this panel shows the new lettering too.
    for (const tile of document.querySelectorAll(`#job-panels figure[data-index="${index}"] img[src]`)) {
      const base = tile.getAttribute("src").split("?")[0];
      tile.src = `${base}?lettering=${panel.content_hash.slice(0, 16)}`;
    }
  }
  image.addEventListener("load", () => {
    stage.removeAttribute("aria-busy");
    stage.dataset.shown = image.getAttribute("src");
  });

  function save(message) {
    status.textContent = STRINGS.saving;
    status.classList.remove("failed");
    const panels = storyboard.panels.map(({ art_hash, content_hash, index: _, ...rest }) => rest);
    saving = saving
      .then(() => api("PATCH", `/api/storyboards/${id}/`, { panels }))
      .then((fresh) => {
        storyboard = fresh;
        status.textContent = message || STRINGS.saved;
        repaint();
        draw();
        document.dispatchEvent(new CustomEvent("lettering:saved", { detail: { index } }));
      })
      .catch(async (err) => {
        status.textContent = err.message;
        status.classList.add("failed");
        storyboard = await api("GET", `/api/storyboards/${id}/`).catch(() => storyboard);
        draw();
      });
    return saving;
  }

  // Where a handle sits: a placed balloon at its centre; one the lettering places waits
  // in a row along the top until it is moved.
  function balloonAt(line, i) {
    return line.place ? [line.place.x, line.place.y] : [0.06 + i * 0.09, 0.05];
  }

  function tailAt(line) {
    if (line.place.tail) return [line.place.tail.x, line.place.tail.y];
    return [line.place.x, clamp(line.place.y + 0.18)];
  }

  function handle(className, [x, y], label, text) {
    const button = element("button", { type: "button", className: `lettering-handle ${className}`, textContent: text });
    button.setAttribute("aria-label", label);
    button.title = label;
    button.style.left = `${x * 100}%`;
    button.style.top = `${y * 100}%`;
    handles.append(button);
    return button;
  }

  // Drags and arrow keys move `button`; `moved(x, y)` writes the place into the panel
  // (then it is saved: at once after a drag, a moment after the last key press).
  function movable(button, moved) {
    let dragging = false;
    const point = (event) => {
      const box = stage.getBoundingClientRect();
      return [clamp((event.clientX - box.left) / box.width), clamp((event.clientY - box.top) / box.height)];
    };
    button.addEventListener("pointerdown", (event) => {
      dragging = true;
      button.setPointerCapture(event.pointerId);
      button.classList.add("dragging");
      event.preventDefault();
    });
    button.addEventListener("pointermove", (event) => {
      if (!dragging) return;
      const [x, y] = point(event);
      button.style.left = `${x * 100}%`;
      button.style.top = `${y * 100}%`;
    });
    button.addEventListener("pointerup", (event) => {
      if (!dragging) return;
      dragging = false;
      button.classList.remove("dragging");
      const [x, y] = point(event);
      moved(x, y);
      save();
    });
    button.addEventListener("keydown", (event) => {
      const delta = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[event.key];
      if (!delta) return;
      event.preventDefault();
      event.stopPropagation(); // the reader's arrows turn pages; here they move the handle
      const step = event.shiftKey ? STEP * 5 : STEP;
      const x = clamp(parseFloat(button.style.left) / 100 + delta[0] * step);
      const y = clamp(parseFloat(button.style.top) / 100 + delta[1] * step);
      button.style.left = `${x * 100}%`;
      button.style.top = `${y * 100}%`;
      moved(x, y);
      clearTimeout(keyTimer);
      keyTimer = setTimeout(() => save(), 400);
    });
  }

  function draw() {
    const panel = panelData();
    const focused = document.activeElement?.dataset?.key;
    handles.replaceChildren();
    lines.replaceChildren();
    effects.replaceChildren();
    if (!panel) return;
    panel.dialogue.forEach((line, i) => {
      const n = i + 1;
      const speaker = line.speaker || STRINGS.narration;
      const balloon = handle(
        `balloon${line.place ? "" : " auto"}`,
        balloonAt(line, i),
        STRINGS.balloon(n, speaker, line.text),
        String(n),
      );
      balloon.dataset.key = `balloon-${i}`;
      balloon.dataset.line = String(i);
      movable(balloon, (x, y) => {
        line.place = { ...(line.place || {}), x, y };
      });
      if (line.place) {
        const tail = handle("tail", tailAt(line), STRINGS.tail(n), "");
        tail.dataset.key = `tail-${i}`;
        tail.dataset.line = String(i);
        movable(tail, (x, y) => {
          line.place = { ...line.place, tail: { x, y } };
        });
      }
      const style = element("select", { className: "line-style" });
      style.setAttribute("aria-label", `${STRINGS.style}, ${STRINGS.balloon(n, speaker, line.text)}`);
      style.dataset.key = `style-${i}`;
      for (const name of STYLES) style.append(new Option(STRINGS.styles[name], name, false, name === (line.style || "speech")));
      style.addEventListener("change", () => {
        line.style = style.value;
        save();
      });
      const auto = element("button", { type: "button", className: "place-auto link", textContent: STRINGS.placeAuto, disabled: !line.place });
      auto.dataset.key = `auto-${i}`;
      auto.addEventListener("click", () => {
        line.place = null;
        save();
      });
      const words = element("span", { className: "line-words", textContent: `${n}. ${speaker}: ${line.text}` });
      const where = element("span", { className: "muted small", textContent: line.place ? "" : ` (${STRINGS.auto})` });
      lines.append(element("li", { className: "line-row" }, words, where, " ", style, " ", auto));
    });
    if (!panel.dialogue.length) lines.append(element("li", { className: "muted", textContent: STRINGS.noLines }));
    panel.sfx.forEach((effect, i) => {
      const n = i + 1;
      const mark = handle("sfx", [effect.x, effect.y], STRINGS.sfxHandle(effect.text), effect.text);
      mark.dataset.key = `sfx-${i}`;
      mark.dataset.sfx = String(i);
      movable(mark, (x, y) => {
        Object.assign(effect, { x, y });
      });
      mark.addEventListener("keydown", (event) => {
        if (event.key !== "Delete" && event.key !== "Backspace") return;
        event.preventDefault();
        panel.sfx.splice(i, 1);
        save();
      });
      const text = element("input", { className: "sfx-text", value: effect.text, maxLength: 40 });
      text.setAttribute("aria-label", STRINGS.sfxText(n));
      text.dataset.key = `sfx-text-${i}`;
      text.addEventListener("change", () => {
        if (!text.value.trim()) return;
        effect.text = text.value.trim();
        save();
      });
      const remove = element("button", { type: "button", className: "sfx-delete link", textContent: STRINGS.removeShort });
      remove.setAttribute("aria-label", STRINGS.remove(n));
      remove.dataset.key = `sfx-delete-${i}`;
      remove.addEventListener("click", () => {
        panel.sfx.splice(i, 1);
        save();
      });
      effects.append(element("li", { className: "sfx-row" }, text, " ", remove));
    });
    addForm.querySelector("button").disabled = panel.sfx.length >= 8;
    // A redraw keeps the keyboard where it was.
    if (focused) section.querySelector(`[data-key="${focused}"]`)?.focus();
  }

  addForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const panel = panelData();
    const text = newText.value.trim();
    if (!panel || !text) return;
    panel.sfx.push({ text, x: 0.5, y: 0.5, ...SFX_DEFAULT });
    newText.value = "";
    save();
  });
  select.addEventListener("change", () => show(Number(select.value)));
  section.addEventListener("toggle", () => {
    if (section.open) refreshPanels().catch((err) => (status.textContent = err.message));
  });
  section.dataset.ready = "1";
}
