// The public reader of a reading link: the published pages one at a time, turned in each
// chapter's reading direction (keys, buttons, swipes), a webtoon chapter as its strip, and
// the language switch among the published translations. Everything comes from the page
// itself (#comic-data): no API, nothing of the owner's beyond the snapshot.
import { bindPageTurns } from "./page-turns.js";
import { gettext } from "./i18n.js";

// The strings this module adds, in one place for the interface's translation.
const STRINGS = {
  pageLabel: (number, count, rtl) =>
    rtl
      ? gettext("Page %(number)s of %(count)s · read right to left", { number, count })
      : gettext("Page %(number)s of %(count)s · read left to right", { number, count }),
  chapter: (number, title) =>
    number ? gettext("Chapter %(number)s: %(title)s", { number, title }) : title,
  pageAlt: (number) => gettext("Page %(number)s", { number }),
  nextPage: gettext("Next page"),
  previousPage: gettext("Previous page"),
};

const root = document.getElementById("published");
const data = JSON.parse(document.getElementById("comic-data").textContent);
const image = document.getElementById("page-image");
const strip = document.getElementById("webtoon-image");
const viewer = document.getElementById("page-viewer");
const language = document.getElementById("language");

let lang = data.language;
const fromHash = Number.parseInt(location.hash.replace("#page-", ""), 10);
let current = Number.isInteger(fromHash) ? Math.min(Math.max(fromHash, 1), data.pages.length) - 1 : 0;

const chapterOf = (page) => data.chapters[page.chapter];

function render() {
  const page = data.pages[current];
  const chapter = chapterOf(page);
  const rtl = chapter.direction === "rtl";
  const webtoon = chapter.format === "webtoon";
  root.dataset.direction = chapter.direction;
  root.dataset.chapter = page.chapter + 1;
  root.dataset.language = lang;
  root.lang = lang;
  viewer.dataset.page = page.number;
  const url = page.urls[lang];
  if (webtoon) {
    if (strip.getAttribute("src") !== url) strip.src = url;
  } else if (image.getAttribute("src") !== url) {
    image.src = url;
  }
  image.alt = STRINGS.pageAlt(page.number);
  document.getElementById("webtoon").hidden = !webtoon;
  image.closest("figure").hidden = webtoon;
  document.getElementById("page-label").textContent = STRINGS.pageLabel(page.number, data.pages.length, rtl);
  document.getElementById("chapter-label").textContent = data.series ? STRINGS.chapter(chapter.number, chapter.titles[lang]) : "";
  document.getElementById("comic-title").textContent = data.series ? data.title : chapter.titles[lang];
  // The button on the side reading moves toward turns forward: in right-to-left, the left.
  const forward = rtl ? "left" : "right";
  const next = document.getElementById(`turn-${forward}`);
  const previous = document.getElementById(`turn-${forward === "left" ? "right" : "left"}`);
  next.disabled = current === data.pages.length - 1;
  previous.disabled = current === 0;
  for (const [button, name] of [[next, STRINGS.nextPage], [previous, STRINGS.previousPage]]) {
    button.setAttribute("aria-label", name);
    button.title = name;
  }
  history.replaceState(null, "", `${location.pathname}${location.search}#page-${page.number}`);
}

function turn(step) {
  const next = current + step;
  if (next < 0 || next >= data.pages.length) return;
  current = next;
  render();
}

// Physical sides: in right-to-left reading the next page is on the left.
bindPageTurns({ viewer, forwardSide: () => (chapterOf(data.pages[current]).direction === "rtl" ? "left" : "right"), turn });

language?.addEventListener("change", () => {
  lang = language.value;
  const address = new URL(location.href);
  address.searchParams.set("lang", lang);
  history.replaceState(null, "", address);
  render();
});

render();
root.dataset.ready = "1";
