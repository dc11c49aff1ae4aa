// Lettering you direct, on the job page and in the reader: a kept panel's picture with a
// handle on each balloon, on the end of its tail and on each sound effect, each where the
// lettering drew it (the server reports where: GET …/panels/<index>/lettering/). A person
// drags them (or selects one and moves it with the arrow keys), picks a balloon's style,
// adds, edits and deletes sound effects; each change is saved on the storyboard as it is
// made (lettering only: no render, no credit), the picture is lettered again at once, and
// "Saved" shows beside what changed. The editor says when a balloon or a sound effect was
// moved in or made smaller to stay inside the panel. "Place automatically" gives a balloon
// back to the lettering layer's choice.
import { api, serverData } from "./api.js";
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
  savedHere: gettext("Saved"),
  movedIn: gettext("Moved in to stay inside the panel."),
  shrunk: gettext("Made smaller to fit the panel."),
  movedAndShrunk: gettext("Made smaller and moved in to stay inside the panel."),
  picture: (index) => gettext("Panel %(index)s with its lettering", { index }),
  smaller: (page) =>
    gettext(
      "Drawn smaller than its frame on page %(page)s: the page shows it at its drawn size, with paper around it, rather than blow it up.",
      { page },
    ),
};
// The balloon styles and their labels, from the page (mangagen/lettering/styles.py).
const STYLES = serverData("balloon-styles", []);
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
  const frameNote = element("p", { id: "lettering-frame", className: "notice small", hidden: true });
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
    frameNote,
    status,
  );
  // Below the panels (the job page) or the pages (the reader).
  const before = document.getElementById("done") || document.getElementById("takes");
  if (before) before.before(section);
  else host.append(section);

  let storyboard = null;
  let index = null;
  let layout = null; // where the lettering drew each thing on the picture shown
  let saving = Promise.resolve();
  let keyTimer = null;
  let changed = null; // the data-key of the row last changed: "Saved" shows beside it

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
    layout = null;
    repaint();
    draw();
    await placeHandles();
  }

  // Where the lettering drew each balloon, tail and sound effect of the panel as it is
  // now: the handles go there. (Asked for after each save: the places change with it.)
  async function placeHandles() {
    const asked = index;
    const fresh = await api("GET", `/api/storyboards/${id}/panels/${asked}/lettering/`).catch(() => null);
    if (asked !== index || !fresh) return;
    layout = fresh;
    frameNote.hidden = !fresh.frame?.drawn_smaller;
    if (fresh.frame?.drawn_smaller) frameNote.textContent = STRINGS.smaller(fresh.frame.page);
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

  // `key`: the data-key of the row the change was made on, where "Saved" then shows.
  function save(message, key = null) {
    changed = key;
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
        return placeHandles();
      })
      .catch(async (err) => {
        status.textContent = err.message;
        status.classList.add("failed");
        storyboard = await api("GET", `/api/storyboards/${id}/`).catch(() => storyboard);
        draw();
      });
    return saving;
  }

  // Where the lettering drew line `i` (null until the server has said).
  const drawnLine = (i) => layout?.lines.find((placed) => placed.number === i) || null;
  const drawnEffect = (i) => layout?.sfx.find((placed) => placed.number === i) || null;

  // Where a balloon's handle sits: where the person put it, unless the lettering had to
  // move it in; else on the balloon as drawn (the panel's middle until the server says).
  function balloonAt(line, i) {
    const drawn = drawnLine(i);
    if (line.place && !drawn?.moved_in) return [line.place.x, line.place.y];
    return drawn ? [drawn.centre.x, drawn.centre.y] : [0.5, 0.5];
  }

  // The end of its tail: as drawn, else where the person aimed it; null for none.
  function tailAt(line, i) {
    const drawn = drawnLine(i);
    if (drawn?.tail) return [drawn.tail.x, drawn.tail.y];
    if (line.place?.tail) return [line.place.tail.x, line.place.tail.y];
    return null;
  }

  // What the lettering had to do to keep it inside the panel, in words ("" for nothing).
  function fitted(drawn) {
    if (!drawn) return "";
    if (drawn.moved_in && drawn.shrunk) return STRINGS.movedAndShrunk;
    if (drawn.moved_in) return STRINGS.movedIn;
    return drawn.shrunk ? STRINGS.shrunk : "";
  }

  // A row's note: what fitting did to it, and "Saved" beside the change just saved.
  function note(key, drawn) {
    const words = element("span", { className: "lettering-note small" });
    words.dataset.note = key;
    const fit = fitted(drawn);
    if (fit) words.append(element("span", { className: "fitted", textContent: fit }));
    if (changed === key) {
      words.append(element("span", { className: "saved-here", textContent: STRINGS.savedHere }));
    }
    return words;
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
      save(undefined, button.dataset.row);
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
      keyTimer = setTimeout(() => save(undefined, button.dataset.row), 400);
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
      const row = `line-${i}`;
      const speaker = line.speaker || STRINGS.narration;
      const balloon = handle(
        `balloon${line.place ? "" : " auto"}`,
        balloonAt(line, i),
        STRINGS.balloon(n, speaker, line.text),
        String(n),
      );
      Object.assign(balloon.dataset, { key: `balloon-${i}`, line: String(i), row });
      movable(balloon, (x, y) => {
        line.place = { ...(line.place || {}), x, y }; // its tail still aims where it did
      });
      const tailEnd = tailAt(line, i);
      if (tailEnd) {
        const tail = handle("tail", tailEnd, STRINGS.tail(n), "");
        Object.assign(tail.dataset, { key: `tail-${i}`, line: String(i), row });
        movable(tail, (x, y) => {
          const [bx, by] = balloonAt(line, i);
          line.place = { x: line.place?.x ?? bx, y: line.place?.y ?? by, tail: { x, y } };
        });
      }
      const style = element("select", { className: "line-style", id: `lettering-style-${i}` });
      style.setAttribute("aria-label", `${STRINGS.style}, ${STRINGS.balloon(n, speaker, line.text)}`);
      style.dataset.key = `style-${i}`;
      for (const [value, label] of STYLES) style.append(new Option(label, value, false, value === (line.style || "speech")));
      style.addEventListener("change", () => {
        line.style = style.value;
        save(undefined, row);
      });
      const styleLabel = element("label", { className: "line-style-label", htmlFor: style.id, textContent: STRINGS.style });
      const auto = element("button", { type: "button", className: "place-auto link", textContent: STRINGS.placeAuto, disabled: !line.place });
      auto.dataset.key = `auto-${i}`;
      auto.addEventListener("click", () => {
        line.place = null;
        save(undefined, row);
      });
      const words = element("span", { className: "line-words", textContent: `${n}. ${speaker}: ${line.text}` });
      const where = element("span", { className: "line-auto muted small", textContent: line.place ? "" : `(${STRINGS.auto})` });
      const controls = element("span", { className: "line-controls" }, styleLabel, style, auto);
      const item = element("li", { className: "line-row" }, words, where, controls, note(row, drawnLine(i)));
      item.dataset.row = row;
      lines.append(item);
    });
    if (!panel.dialogue.length) lines.append(element("li", { className: "muted no-lines", textContent: STRINGS.noLines }));
    panel.sfx.forEach((effect, i) => {
      const n = i + 1;
      const row = `sfx-${i}`;
      const drawn = drawnEffect(i);
      // Where the person put it, unless the lettering had to move it in to keep it inside.
      const at = drawn?.moved_in ? [drawn.centre.x, drawn.centre.y] : [effect.x, effect.y];
      const mark = handle("sfx", at, STRINGS.sfxHandle(effect.text), effect.text);
      Object.assign(mark.dataset, { key: `sfx-${i}`, sfx: String(i), row });
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
        save(undefined, row);
      });
      const remove = element("button", { type: "button", className: "sfx-delete link", textContent: STRINGS.removeShort });
      remove.setAttribute("aria-label", STRINGS.remove(n));
      remove.dataset.key = `sfx-delete-${i}`;
      remove.addEventListener("click", () => {
        panel.sfx.splice(i, 1);
        save();
      });
      const item = element("li", { className: "sfx-row" }, text, " ", remove, note(row, drawn));
      item.dataset.row = row;
      effects.append(item);
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
    save(undefined, `sfx-${panel.sfx.length - 1}`);
  });
  select.addEventListener("change", () => show(Number(select.value)));
  section.addEventListener("toggle", () => {
    if (section.open) refreshPanels().catch((err) => (status.textContent = err.message));
  });
  section.dataset.ready = "1";
}
