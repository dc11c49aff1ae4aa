// The reader: pages one at a time, turned in the comic's reading direction (keys, buttons,
// swipes), or the webtoon strip; layout choices are saved on the storyboard. The language
// switch letters the pages and downloads in one of the comic's translations (?lang=).
import { api } from "./api.js";
import { bindPageTurns } from "./page-turns.js";
import { gettext, ngettext } from "./i18n.js";

// The strings this module adds, in one place for the interface's translation.
const STRINGS = {
  original: (name) => gettext("%(name)s (original)", { name }),
  translation: (t) =>
    t.missing
      ? ngettext("%(name)s (%(count)s line in the original)", "%(name)s (%(count)s lines in the original)", t.missing, {
          name: t.name,
          count: t.missing,
        })
      : t.name,
  undrawn: (count) =>
    ngettext("%(count)s panel not drawn yet (shown as placeholders).", "%(count)s panels not drawn yet (shown as placeholders).", count),
  pageAlt: (page) => gettext("Page %(number)s: panels %(panels)s", { number: page.number, panels: page.panels.join(gettext(", ")) }),
  pageLabel: (number, count, rtl) =>
    rtl
      ? gettext("Page %(number)s of %(count)s · read right to left", { number, count })
      : gettext("Page %(number)s of %(count)s · read left to right", { number, count }),
  panel: (index) => gettext("Panel %(index)s", { index }),
  take: (index, take) => gettext("Panel %(index)s, take %(take)s", { index, take }),
  nextPage: gettext("Next page"),
  previousPage: gettext("Previous page"),
  shown: gettext("Shown"),
  showTake: gettext("Show this take"),
  drawingPage: (number) => gettext("Drawing page %(number)s…", { number }),
  drawingStrip: gettext("Drawing the strip…"),
  notShown: gettext("This picture could not be shown. Reload the page to try again."),
};

const root = document.getElementById("reader");
const id = root.dataset.storyboard;
const viewer = document.getElementById("page-viewer");
const image = document.getElementById("page-image");
const label = document.getElementById("page-label");
const tools = document.getElementById("page-tools");
const template = document.getElementById("page-template");
const direction = document.getElementById("direction");
const format = document.getElementById("format");
const language = document.getElementById("language");

const status = document.getElementById("page-status");

// The status line: `text`, with the spinner while drawing; hidden when there is nothing to say.
function say(text, { failed = false } = {}) {
  status.hidden = !text;
  status.classList.toggle("failed", failed);
  status.querySelector(".spinner").hidden = failed;
  document.getElementById("page-status-text").textContent = text;
}

// A page's picture is composed when first asked for (a second or more for a long comic):
// while one comes, say so, and dim the page it replaces rather than show an empty frame.
function showPicture(img, url, drawing) {
  if (img.getAttribute("src") === url) return;
  img.setAttribute("aria-busy", "true");
  img.classList.toggle("blank", !img.naturalWidth); // nothing shown yet: a page-shaped frame
  say(drawing);
  img.src = url;
}

function pictureSettled(img, shown) {
  if (img.getAttribute("aria-busy") !== "true") return;
  img.removeAttribute("aria-busy");
  img.classList.remove("blank");
  say(shown ? "" : STRINGS.notShown, { failed: !shown });
}

for (const img of [image, document.getElementById("webtoon-image")]) {
  img.addEventListener("load", () => pictureSettled(img, true));
  img.addEventListener("error", () => pictureSettled(img, false));
}

let state = { direction: "rtl", format: "manga", pages: [], kept: [], breaks: [] };
let current = 0;
let storyboard = null;

// The language read in: the original's, or a translation's (kept in the address).
let lang = new URL(location.href).searchParams.get("lang") || root.dataset.original;
const langQuery = () => (lang === root.dataset.original ? "" : `lang=${encodeURIComponent(lang)}`);

async function loadLanguages() {
  const list = await api("GET", `/api/storyboards/${id}/translations/`);
  if (!list.translations.some((t) => t.language === lang)) lang = list.original;
  language.replaceChildren(
    new Option(STRINGS.original(list.name), list.original, false, lang === list.original),
    ...list.translations.map((t) => new Option(STRINGS.translation(t), t.language, false, t.language === lang)),
  );
}

async function load() {
  const query = langQuery();
  [state, storyboard] = await Promise.all([
    api("GET", `/api/storyboards/${id}/pages/${query ? `?${query}` : ""}`),
    api("GET", `/api/storyboards/${id}/`),
  ]);
  current = Math.min(current, Math.max(0, state.pages.length - 1));
  render();
}

function render() {
  root.dataset.direction = state.direction;
  root.dataset.format = state.format;
  direction.value = state.direction;
  format.value = state.format;
  const empty = state.pages.length === 0;
  document.getElementById("nothing-yet").hidden = !empty;
  const undrawn = storyboard.panels.length - state.kept.length;
  const note = document.getElementById("undrawn");
  note.hidden = empty || undrawn === 0;
  note.textContent = STRINGS.undrawn(undrawn);
  const webtoon = state.format === "webtoon";
  viewer.hidden = empty || webtoon;
  tools.hidden = empty || webtoon;
  document.getElementById("webtoon").hidden = empty || !webtoon;
  root.dataset.language = state.language;
  document.getElementById("comic-title").textContent = state.title;
  document.getElementById("comic-title").lang = state.language;
  for (const link of document.querySelectorAll("[download]")) link.classList.toggle("disabled", empty);
  // The downloads, and the chapters before and after, in the language read in (a chapter
  // without that translation opens in its original).
  for (const link of document.querySelectorAll("[download], #previous-chapter, #next-chapter")) {
    const href = new URL(link.href);
    if (langQuery()) href.searchParams.set("lang", lang);
    else href.searchParams.delete("lang");
    link.href = href.pathname + href.search;
  }
  // The layered download is of the page shown; the strip has no page of its own.
  const psd = document.getElementById("download-psd");
  psd.hidden = empty || webtoon;
  if (empty) {
    say("");
    return;
  }
  if (webtoon) {
    showPicture(document.getElementById("webtoon-image"), state.pages[0].image_url, STRINGS.drawingStrip);
    return;
  }
  const page = state.pages[current];
  const psdHref = new URL(psd.href);
  psdHref.searchParams.set("page", page.number);
  psd.href = psdHref.pathname + psdHref.search;
  showPicture(image, page.image_url, STRINGS.drawingPage(page.number));
  image.alt = STRINGS.pageAlt(page);
  viewer.dataset.page = page.number;
  label.textContent = STRINGS.pageLabel(page.number, state.pages.length, state.direction === "rtl");
  template.value = storyboard.layout.templates[String(page.panels[0])] || "auto";
  document.getElementById("pull-panel").disabled = current === state.pages.length - 1;
  document.getElementById("push-panel").disabled = page.panels.length < 2;
  // The button on the side reading moves toward turns forward, and is named so: in a
  // right-to-left comic "Next page" is the left one.
  const forward = state.direction === "rtl" ? "left" : "right";
  const next = document.getElementById(`turn-${forward}`);
  const previous = document.getElementById(`turn-${forward === "left" ? "right" : "left"}`);
  const focused = document.activeElement;
  next.disabled = current === state.pages.length - 1;
  previous.disabled = current === 0;
  // A turn button that just became disabled under the keyboard hands its focus to the other.
  for (const [button, other] of [[next, previous], [previous, next]]) {
    if (button.disabled && focused === button && !other.disabled) other.focus();
  }
  for (const [button, name] of [[next, STRINGS.nextPage], [previous, STRINGS.previousPage]]) {
    button.setAttribute("aria-label", name);
    button.title = name;
  }
}

function turn(step) {
  const next = current + step;
  if (next < 0 || next >= state.pages.length || state.format === "webtoon") return;
  current = next;
  render();
}

// Physical sides: in right-to-left reading the next page is on the left.
bindPageTurns({ viewer, forwardSide: () => (state.direction === "rtl" ? "left" : "right"), turn });

async function saveLayout(layout) {
  await api("PATCH", `/api/storyboards/${id}/`, { layout });
  await load();
}

language.addEventListener("change", async () => {
  lang = language.value;
  const address = new URL(location.href);
  if (langQuery()) address.searchParams.set("lang", lang);
  else address.searchParams.delete("lang");
  history.replaceState(null, "", address);
  await load();
});
direction.addEventListener("change", () => saveLayout({ direction: direction.value }));
format.addEventListener("change", () => saveLayout({ format: format.value }));
template.addEventListener("change", () => {
  const templates = { ...storyboard.layout.templates, [String(state.pages[current].panels[0])]: template.value };
  saveLayout({ templates });
});
document.getElementById("pull-panel").addEventListener("click", () => {
  const breaks = state.breaks.slice();
  const following = breaks[current + 1];
  const nextPage = state.pages[current + 1];
  if (nextPage.panels.length === 1) breaks.splice(current + 1, 1);
  else breaks[current + 1] = following + 1;
  saveLayout({ breaks });
});
document.getElementById("push-panel").addEventListener("click", () => {
  const page = state.pages[current];
  const last = page.panels[page.panels.length - 1];
  const breaks = state.breaks.filter((b) => b !== state.pages[current + 1]?.panels[0]);
  breaks.push(last);
  saveLayout({ breaks: breaks.sort((a, b) => a - b) });
});
document.getElementById("auto-breaks").addEventListener("click", () => saveLayout({ breaks: [], templates: {} }));

// Takes: every delivered render is kept; a panel shows its most recently chosen one.
const takes = document.getElementById("takes");
async function showTakes() {
  const list = document.getElementById("takes-list");
  const rows = [];
  for (const index of state.kept) {
    const answer = await api("GET", `/api/storyboards/${id}/panels/${index}/takes/`);
    if (answer.takes.length < 2) continue;
    const row = document.createElement("div");
    row.className = "take-row";
    row.dataset.index = index;
    row.append(Object.assign(document.createElement("strong"), { textContent: STRINGS.panel(index) }));
    answer.takes.forEach((take, i) => {
      const figure = document.createElement("figure");
      figure.className = take.current ? "take current" : "take";
      const img = Object.assign(document.createElement("img"), {
        src: take.image_url,
        alt: STRINGS.take(index, answer.takes.length - i),
      });
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = take.current ? STRINGS.shown : STRINGS.showTake;
      button.disabled = take.current;
      button.addEventListener("click", async () => {
        await api("POST", `/api/storyboards/${id}/panels/${index}/takes/${take.id}/choose/`, {});
        await load();
        await showTakes();
      });
      figure.append(img, button);
      row.append(figure);
    });
    rows.push(row);
  }
  list.replaceChildren(...rows);
  takes.hidden = rows.length === 0;
}

// The lettering editor (lettering.js) saved a change: the pages are lettered again.
document.addEventListener("lettering:saved", () => load());

await loadLanguages();
await load();
await showTakes();
root.dataset.ready = "1";
