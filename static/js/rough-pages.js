// Rough pages: the comic's *name* on Review, and its roughs on the Storyboard screen.
//
// A rough is a free pencil draft of one panel (docs/api.md, "Rough pages"). Review shows
// the comic's pages composed from the roughs and lettered, in reading order and
// direction, each rough appearing as it lands (the comic's stream, /ws/storyboards/<id>/,
// or a poll while no stream is open). A person picks a panel on a page to draw its rough
// again, change its shot, blocking or lines, or move its balloons; changes the breaks and
// templates of the pages; and sees the pages composed again at once. Nothing here holds or
// spends a credit: a text or layout change draws no picture, a picture's change draws
// only that panel's rough.
import { ApiError, api } from "./api.js";
import { gettext, pgettext } from "./i18n.js";

const STRINGS = {
  drawing: (ready, total) => gettext("Roughs drawn: %(ready)s of %(total)s", { ready, total }),
  allReady: gettext("Every rough is drawn. Change anything you like: it costs nothing."),
  budget: gettext("You have had today's free roughs; the ones drawn stay."),
  page: (number) => gettext("Page %(number)s", { number }),
  pageAlt: (number, panels) => gettext("Rough page %(number)s: panels %(panels)s", { number, panels }),
  cell: (index) => gettext("Panel %(index)s: change it", { index }),
  panel: (index) => gettext("Panel %(index)s", { index }),
  state: {
    queued: gettext("Its rough is waiting for the draft model."),
    drawing: gettext("Its rough is being drawn…"),
    ready: gettext("Its rough is drawn."),
    failed: gettext("Its rough could not be drawn; draw it again."),
    none: gettext("No rough yet."),
  },
  redraw: gettext("Draw this rough again"),
  shot: gettext("Shot"),
  stands: (name) => gettext("Where %(name)s stands", { name }),
  lines: gettext("Lines"),
  line: (n, speaker) => gettext("Line %(n)s, %(speaker)s", { n, speaker }),
  narration: gettext("Narration"),
  balloons: gettext("Drag a numbered balloon on the page to move it; it is lettered again at once."),
  balloon: (n) => gettext("Balloon %(n)s", { n }),
  placeAuto: gettext("Place the balloons automatically"),
  template: gettext("Page template"),
  pull: gettext("Pull the next panel onto this page"),
  push: gettext("Push the last panel to the next page"),
  breakHere: gettext("Start a new page at this panel"),
  autoBreaks: gettext("Let the layout choose the breaks"),
  reshaped: (index) =>
    gettext("Panel %(index)s was drawn for another shape of cell than it has now.", { index }),
  fit: gettext("Fit the picture to its new cell (free)"),
  redrawFinal: gettext("Draw it again for this cell (one credit, at Generate)"),
  saving: gettext("Saving…"),
  saved: gettext("Saved. The pages are composed again."),
};
const POSITIONS = [
  ["", pgettext("where a character stands", "Anywhere")],
  ["left", pgettext("where a character stands", "Left")],
  ["center", pgettext("where a character stands", "Center")],
  ["right", pgettext("where a character stands", "Right")],
];
const POLL_MS = 2500; // with no stream open, the roughs are read this often while one is drawing

function element(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const clamp = (v) => Math.min(1, Math.max(0, Math.round(v * 1000) / 1000));

// The comic's roughs as they change: `onRoughs(list)` with the whole list (on connect, on
// a ping's answer, on every poll), `onRough(one)` for each one pushed. The stream when it
// opens; a poll every POLL_MS while it is closed and a rough is still being drawn.
export function watchRoughs(id, { onRoughs, onRough }) {
  let socket = null;
  let pollTimer = null;
  let pingTimer = null;
  let closed = false;
  let pending = true;

  const poll = async () => {
    clearTimeout(pollTimer);
    if (closed || (socket && socket.readyState === WebSocket.OPEN)) return;
    try {
      const body = await api("GET", `/api/storyboards/${id}/roughs/`);
      pending = body.roughs.some((r) => r.state === "queued" || r.state === "drawing");
      onRoughs(body);
    } catch (err) {
      // Unreadable for now: the next poll tries again.
    }
    if (pending) pollTimer = setTimeout(poll, POLL_MS);
  };

  const open = () => {
    if (closed) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/storyboards/${id}/`);
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (err) {
        return;
      }
      if (message.type === "roughs") onRoughs(message.data);
      else if (message.type === "rough") onRough(message.data);
    });
    socket.addEventListener("open", () => {
      clearInterval(pingTimer);
      pingTimer = setInterval(() => socket.readyState === WebSocket.OPEN && socket.send('{"type":"ping"}'), 20000);
    });
    socket.addEventListener("close", (event) => {
      clearInterval(pingTimer);
      if (closed) return;
      poll(); // the fallback while the stream is down
      if (event.code !== 4403 && event.code !== 4429) setTimeout(open, 5000);
    });
  };
  open();
  return {
    // A rough was just asked for: make sure something reads it (the stream, or a poll).
    expect() {
      pending = true;
      if (!socket || socket.readyState !== WebSocket.OPEN) poll();
    },
    close() {
      closed = true;
      clearTimeout(pollTimer);
      clearInterval(pingTimer);
      if (socket) socket.close();
    },
  };
}

// Asks for the roughs of every panel that has none. Resolves to the answer, or to null when
// the person is not offered roughs (no credit: 402) or has had today's (429).
export async function askForRoughs(id) {
  try {
    return await api("POST", `/api/storyboards/${id}/roughs/`, {});
  } catch (err) {
    if (err instanceof ApiError && (err.status === 402 || err.status === 429)) return { refused: err };
    throw err;
  }
}

// Review's rough pages, in `root` (a section the template gives, hidden until roughs are
// offered). `shots` and `templates`: their names. Returns { ask(), show(), stop() }.
export function roughPages(root, { id, shots, templates }) {
  const row = root.querySelector("#rough-pages-row");
  const status = root.querySelector("#rough-status");
  const editor = root.querySelector("#rough-panel");
  let storyboard = null;
  let pages = null;
  let roughs = new Map(); // index -> rough
  let selected = null;
  let saving = Promise.resolve();
  let reloadTimer = null;
  let pagesAsked = 0;
  let pagesShown = 0;
  let watcher = null;

  const panelOf = (index) => storyboard.panels.find((p) => p.index === index);

  function say(text, failed = false) {
    status.textContent = text;
    status.classList.toggle("failed", failed);
  }

  function showProgress() {
    const total = storyboard.panels.filter((p) => p.description.trim()).length;
    const current = [...roughs.values()].filter((r) => r.art_hash === panelOf(r.index)?.art_hash);
    const ready = current.filter((r) => r.state === "ready").length;
    root.dataset.ready = String(ready);
    root.dataset.total = String(total);
    say(ready >= total ? STRINGS.allReady : STRINGS.drawing(ready, total));
  }

  // The pages composed again from what is drawn now; a page whose address did not change
  // keeps its picture (each rough page is keyed by what is on it).
  // Answers can come back out of order (several roughs landing together each ask again):
  // an answer to an earlier question never replaces a later one on screen.
  async function loadPages() {
    const ticket = ++pagesAsked;
    root.dataset.pagesAsked = String(pagesAsked);
    let answer;
    try {
      answer = await api("GET", `/api/storyboards/${id}/pages/?rough=1`);
    } finally {
      root.dataset.pagesAnswered = String(Number(root.dataset.pagesAnswered || 0) + 1);
    }
    if (ticket < pagesShown) return;
    pagesShown = ticket;
    pages = answer;
    row.dir = answer.direction === "rtl" ? "rtl" : "ltr";
    const figures = answer.pages.map((page) => pageFigure(page, answer));
    const focused = document.activeElement?.dataset?.key;
    row.replaceChildren(...figures);
    if (focused) row.querySelector(`[data-key="${focused}"]`)?.focus();
    root.dataset.roughs = answer.roughs.join(",");
    drawHandles();
    showReshaped(answer.reshaped || []);
  }

  // Panels drawn before a page break or template moved, whose cell changed shape: fit
  // the picture as it is (free) or draw it again for the cell (one credit, at Generate).
  function showReshaped(indices) {
    const box = root.querySelector("#rough-reshaped");
    box.replaceChildren(
      ...indices.map((index) => {
        const row = element("p", { className: "notice rough-reshaped" });
        row.dataset.index = String(index);
        for (const [choice, label] of [["fit", STRINGS.fit], ["redraw", STRINGS.redrawFinal]]) {
          const button = element("button", { type: "button", className: "link", textContent: label });
          button.dataset.choice = choice;
          button.addEventListener("click", async () => {
            button.disabled = true;
            try {
              await api("POST", `/api/storyboards/${id}/panels/${index}/reshape/`, { choice });
              await loadPages();
              document.dispatchEvent(new CustomEvent("rough-pages:changed", { detail: { redrawn: false } }));
            } catch (err) {
              say(err.message, true);
              button.disabled = false;
            }
          });
          row.append(" ", button);
        }
        row.prepend(STRINGS.reshaped(index));
        return row;
      }),
    );
  }

  function show(img, url) {
    if (img.dataset.want === url) return;
    img.dataset.want = url;
    if (!img.getAttribute("src")) {
      img.src = url;
      return;
    }
    const next = new Image();
    next.src = url;
    next
      .decode()
      .catch(() => {})
      .then(() => {
        if (img.dataset.want === url) img.src = url;
      });
  }

  function reloadSoon() {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => loadPages().catch(() => {}), 150);
  }

  function pageFigure(page, answer) {
    // The page's picture so far stays on screen until the new one is decoded: no blank
    // page while a rough lands.
    const img = row.querySelector(`figure[data-number="${page.number}"] img`) || element("img");
    img.alt = STRINGS.pageAlt(page.number, page.panels.join(", "));
    show(img, page.image_url);
    const stage = element("div", { className: "rough-page-stage" }, img);
    for (const [index, [x0, y0, x1, y1]] of Object.entries(page.cells || {})) {
      const cell = element("button", { type: "button", className: "rough-cell" });
      cell.dataset.index = index;
      cell.dataset.key = `cell-${index}`;
      cell.setAttribute("aria-label", STRINGS.cell(index));
      cell.title = STRINGS.cell(index);
      cell.classList.toggle("selected", Number(index) === selected);
      cell.classList.toggle("drawn", answer.roughs.includes(Number(index)) || answer.kept.includes(Number(index)));
      Object.assign(cell.style, {
        left: `${x0 * 100}%`,
        top: `${y0 * 100}%`,
        width: `${(x1 - x0) * 100}%`,
        height: `${(y1 - y0) * 100}%`,
      });
      cell.addEventListener("click", () => select(Number(index)));
      stage.append(cell);
    }
    const template = element("select", { className: "rough-template" });
    template.dataset.key = `template-${page.number}`;
    template.setAttribute("aria-label", `${STRINGS.template}, ${STRINGS.page(page.number)}`);
    const chosen = storyboard.layout.templates[String(page.panels[0])] || "auto";
    for (const [value, label] of templates) template.append(new Option(label, value, false, value === chosen));
    template.addEventListener("change", () => {
      saveLayout({ templates: { ...storyboard.layout.templates, [String(page.panels[0])]: template.value } });
    });
    const last = answer.pages[answer.pages.length - 1].number === page.number;
    const pull = element("button", { type: "button", className: "link rough-pull", textContent: STRINGS.pull, disabled: last });
    pull.dataset.key = `pull-${page.number}`;
    pull.addEventListener("click", () => moveBreak(page.number, +1));
    const push = element("button", { type: "button", className: "link rough-push", textContent: STRINGS.push, disabled: page.panels.length < 2 });
    push.dataset.key = `push-${page.number}`;
    push.addEventListener("click", () => moveBreak(page.number, -1));
    const caption = element(
      "figcaption",
      { className: "rough-page-tools" },
      element("strong", { textContent: STRINGS.page(page.number) }),
      " ",
      element("label", {}, template),
      " ",
      pull,
      " ",
      push,
    );
    const figure = element("figure", { className: "rough-page" }, stage, caption);
    figure.dataset.number = String(page.number);
    figure.dataset.panels = page.panels.join(",");
    return figure;
  }

  // The page breaks as the pages are now, one moved: +1 pulls the next page's first panel
  // onto page `number`; -1 pushes page `number`'s last panel to the next page.
  function moveBreak(number, step) {
    const starts = pages.pages.map((p) => p.panels[0]);
    const page = pages.pages[number - 1];
    if (step > 0) {
      const next = pages.pages[number];
      if (next.panels.length === 1) starts.splice(number, 1);
      else starts[number] = next.panels[1];
    } else {
      const lastPanel = page.panels[page.panels.length - 1];
      if (number < starts.length) starts[number] = lastPanel;
      else starts.push(lastPanel);
    }
    saveLayout({ breaks: [...new Set(starts)].sort((a, b) => a - b) });
  }

  function saveLayout(layout) {
    say(STRINGS.saving);
    saving = saving
      .then(() => api("PATCH", `/api/storyboards/${id}/`, { layout }))
      .then(async (fresh) => {
        storyboard = fresh;
        await loadPages();
        say(STRINGS.saved);
      })
      .catch((err) => say(err.message, true));
    return saving;
  }

  // A panel's change saved; a change to its picture asks for its rough (the others keep
  // theirs), a change to its text only composes the pages again.
  function savePanels() {
    say(STRINGS.saving);
    const before = new Map(storyboard.panels.map((p) => [p.index, p.art_hash]));
    const panels = storyboard.panels.map(({ art_hash, content_hash, index: _, ...rest }) => rest);
    saving = saving
      .then(() => api("PATCH", `/api/storyboards/${id}/`, { panels }))
      .then(async (fresh) => {
        storyboard = fresh;
        const redrawn = fresh.panels.some((p) => before.get(p.index) !== p.art_hash);
        if (redrawn) {
          await askForRoughs(id);
          watcher.expect();
        }
        await loadPages();
        showEditor();
        showProgress();
        say(STRINGS.saved);
        document.dispatchEvent(new CustomEvent("rough-pages:changed", { detail: { redrawn } }));
      })
      .catch((err) => say(err.message, true));
    return saving;
  }

  function select(index) {
    selected = index;
    for (const cell of row.querySelectorAll(".rough-cell")) cell.classList.toggle("selected", Number(cell.dataset.index) === index);
    showEditor();
    drawHandles();
  }

  function showEditor() {
    const panel = selected !== null && panelOf(selected);
    editor.hidden = !panel;
    if (!panel) return;
    const rough = roughs.get(panel.index);
    const current = rough && rough.art_hash === panel.art_hash ? rough : null;
    const stateText = STRINGS.state[current ? current.state : "none"];
    const redraw = element("button", { type: "button", id: "rough-redraw", textContent: STRINGS.redraw });
    redraw.addEventListener("click", async () => {
      redraw.disabled = true;
      try {
        await api("POST", `/api/storyboards/${id}/panels/${panel.index}/rough/`, {});
        watcher.expect();
        roughs.set(panel.index, { index: panel.index, art_hash: panel.art_hash, state: "queued" });
        showEditor();
      } catch (err) {
        say(err.message, true);
        redraw.disabled = false;
      }
    });
    const shot = element("select", { id: "rough-shot" });
    for (const [value, label] of shots) shot.append(new Option(label, value, false, value === panel.shot));
    shot.addEventListener("change", () => {
      panel.shot = shot.value;
      savePanels();
    });
    const blocking = element("div", { className: "rough-blocking" });
    for (const name of panel.characters) {
      const where = element("select", { className: "rough-stands" });
      where.dataset.character = name;
      where.setAttribute("aria-label", STRINGS.stands(name));
      for (const [value, label] of POSITIONS) where.append(new Option(label, value, false, value === (panel.blocking?.[name] || "")));
      where.addEventListener("change", () => {
        panel.blocking = { ...(panel.blocking || {}) };
        if (where.value) panel.blocking[name] = where.value;
        else delete panel.blocking[name];
        savePanels();
      });
      blocking.append(element("label", {}, `${STRINGS.stands(name)} `, where));
    }
    const lines = element("ol", { className: "rough-lines" });
    panel.dialogue.forEach((line, i) => {
      const text = element("input", { className: "rough-line", value: line.text, maxLength: 500 });
      text.setAttribute("aria-label", STRINGS.line(i + 1, line.speaker || STRINGS.narration));
      text.addEventListener("change", () => {
        if (!text.value.trim()) return;
        line.text = text.value.trim();
        savePanels();
      });
      lines.append(element("li", {}, element("span", { className: "muted small", textContent: `${line.speaker || STRINGS.narration}: ` }), text));
    });
    const auto = element("button", { type: "button", className: "link", textContent: STRINGS.placeAuto, disabled: !panel.dialogue.some((l) => l.place) });
    auto.addEventListener("click", () => {
      for (const line of panel.dialogue) line.place = null;
      savePanels();
    });
    const breakHere = element("label", { className: "rough-break" });
    const box = element("input", { type: "checkbox", id: "rough-break-here" });
    const starts = pages ? pages.pages.map((p) => p.panels[0]) : [];
    box.checked = starts.includes(panel.index);
    box.disabled = panel.index === storyboard.panels[0].index;
    box.addEventListener("change", () => {
      const breaks = new Set(starts);
      if (box.checked) breaks.add(panel.index);
      else breaks.delete(panel.index);
      saveLayout({ breaks: [...breaks].sort((a, b) => a - b) });
    });
    breakHere.append(box, ` ${STRINGS.breakHere}`);
    const autoBreaks = element("button", { type: "button", className: "link", textContent: STRINGS.autoBreaks });
    autoBreaks.addEventListener("click", () => saveLayout({ breaks: [], templates: {} }));
    editor.replaceChildren(
      element("h3", { textContent: STRINGS.panel(panel.index) }),
      element("p", { className: "muted small", id: "rough-state", textContent: stateText }),
      redraw,
      element("label", { className: "rough-field" }, `${STRINGS.shot} `, shot),
      blocking,
      element("h4", { textContent: STRINGS.lines }),
      lines,
      element("p", { className: "muted small", textContent: STRINGS.balloons }),
      auto,
      element("p", {}, breakHere, " ", autoBreaks),
    );
    editor.dataset.index = String(panel.index);
    editor.dataset.state = current ? current.state : "none";
  }

  // The selected panel's balloons as numbered handles on its cell of the page: dragged,
  // each one's place is saved (lettering: no render) and the page is composed again.
  function drawHandles() {
    for (const old of row.querySelectorAll(".rough-balloon")) old.remove();
    const panel = selected !== null && storyboard && panelOf(selected);
    if (!panel || !pages) return;
    const page = pages.pages.find((p) => p.panels.includes(panel.index));
    const rect = page?.cells?.[String(panel.index)];
    const stage = page && row.querySelector(`figure[data-number="${page.number}"] .rough-page-stage`);
    if (!rect || !stage) return;
    const [x0, y0, x1, y1] = rect;
    panel.dialogue.forEach((line, i) => {
      const [px, py] = line.place ? [line.place.x, line.place.y] : [0.08 + i * 0.12, 0.08];
      const handle = element("button", { type: "button", className: `rough-balloon${line.place ? "" : " auto"}`, textContent: String(i + 1) });
      handle.setAttribute("aria-label", STRINGS.balloon(i + 1));
      handle.dataset.key = `balloon-${i}`;
      handle.style.left = `${(x0 + px * (x1 - x0)) * 100}%`;
      handle.style.top = `${(y0 + py * (y1 - y0)) * 100}%`;
      let dragging = false;
      const at = (event) => {
        const box = stage.getBoundingClientRect();
        const fx = (event.clientX - box.left) / box.width;
        const fy = (event.clientY - box.top) / box.height;
        return [clamp((fx - x0) / (x1 - x0)), clamp((fy - y0) / (y1 - y0)), fx, fy];
      };
      handle.addEventListener("pointerdown", (event) => {
        dragging = true;
        handle.setPointerCapture(event.pointerId);
        event.preventDefault();
      });
      handle.addEventListener("pointermove", (event) => {
        if (!dragging) return;
        const [, , fx, fy] = at(event);
        handle.style.left = `${fx * 100}%`;
        handle.style.top = `${fy * 100}%`;
      });
      handle.addEventListener("pointerup", (event) => {
        if (!dragging) return;
        dragging = false;
        const [x, y] = at(event);
        line.place = { ...(line.place || {}), x, y };
        savePanels();
      });
      stage.append(handle);
    });
  }

  function noteRough(rough) {
    const known = roughs.get(rough.index);
    roughs.set(rough.index, rough);
    if (rough.state === "ready" && (!known || known.image_url !== rough.image_url)) reloadSoon();
    if (rough.index === selected) showEditor();
    showProgress();
  }

  let asked = null;
  return {
    // Asks for the roughs (before speculation: panel one's final is drawn from its rough).
    // Resolves to false when the person is not offered roughs (no credit).
    ask() {
      asked =
        asked ||
        askForRoughs(id).then((answer) => {
          if (answer && answer.refused && answer.refused.status === 402) return null;
          return answer;
        });
      return asked.then((answer) => answer !== null);
    },
    // Shows the rough pages and follows the roughs as they land.
    async show() {
      const answer = await asked;
      if (answer === null) return false; // not offered: Review stays as it was
      storyboard = await api("GET", `/api/storyboards/${id}/`);
      if (answer && answer.refused) say(STRINGS.budget);
      root.hidden = false;
      watcher = watchRoughs(id, {
        onRoughs(body) {
          roughs = new Map(body.roughs.map((r) => [r.index, r]));
          reloadSoon();
          if (selected !== null) showEditor();
          showProgress();
        },
        onRough: noteRough,
      });
      if (answer && answer.roughs) for (const rough of answer.roughs) roughs.set(rough.index, rough);
      await loadPages();
      showProgress();
      return true;
    },
    stop() {
      if (watcher) watcher.close();
    },
  };
}
