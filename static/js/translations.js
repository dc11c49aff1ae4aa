// The translation editor: the original beside a translation, line by line, saved as you
// type. Stale lines (the original changed since) are marked until retranslated or confirmed.
import { ApiError, api, autosaver, scriptReady, showErrors } from "./api.js";
import { gettext, ngettext } from "./i18n.js";

// Every string this module shows, in one place for the interface's translation.
const STRINGS = {
  title: gettext("Title"),
  panel: (index) => gettext("Panel %(index)s", { index }),
  caption: gettext("Caption"),
  narration: gettext("Narration"),
  noText: gettext("No text in any panel yet."),
  counts: (missing, stale) =>
    [
      missing
        ? ngettext(
            "%(count)s line to translate (lettered in the original meanwhile)",
            "%(count)s lines to translate (lettered in the original meanwhile)",
            missing,
          )
        : gettext("Every line is translated"),
      stale ? gettext("%(count)s changed in the original since", { count: stale }) : "",
    ]
      .filter(Boolean)
      .join(" · ") + gettext("."),
  option: (t) => (t.missing || t.stale ? gettext("%(name)s (%(count)s to do)", { name: t.name, count: t.missing + t.stale }) : t.name),
  fieldLabel: (name, where) => gettext("%(name)s: %(where)s", { name, where }),
  lineOf: (index, line, speaker) =>
    speaker
      ? gettext("panel %(index)s, line %(line)s (%(speaker)s)", { index, line, speaker })
      : gettext("panel %(index)s, line %(line)s", { index, line }),
  captionOf: (index) => gettext("panel %(index)s, caption", { index }),
  sfx: gettext("Sound effect"),
  sfxOf: (index, n) => gettext("panel %(index)s, sound effect %(n)s", { index, n }),
  titleOf: gettext("title"),
  confirmDelete: (name) =>
    gettext("Delete the %(name)s translation? Its lines are gone for good; the comic and its art stay.", { name }),
  drafting: gettext("Drafting…"),
  draft: gettext("Draft the missing lines"),
};

const root = document.getElementById("translations");
const id = root.dataset.storyboard;
const select = document.getElementById("language");
const addSelect = document.getElementById("add-language");
const editor = document.getElementById("editor");
const lines = document.getElementById("lines");
const rowTemplate = document.getElementById("line-row");
const notice = document.getElementById("notice");
const draftButton = document.getElementById("draft");

let summaries = [];
let current = null; // the open translation as the server last answered it

const url = (lang) => `/api/storyboards/${id}/translations/${encodeURIComponent(lang)}/`;

function row(line, { slot, panel = 0, position = 0, who = "", where }) {
  const node = rowTemplate.content.firstElementChild.cloneNode(true);
  Object.assign(node.dataset, { slot, panel, line: position });
  node.querySelector(".t-who").textContent = who;
  node.querySelector(".t-text").textContent = line.original;
  const input = node.querySelector(".t-input");
  input.value = line.text;
  input.lang = current.language;
  input.maxLength = Number(root.dataset[`max${slot[0].toUpperCase()}${slot.slice(1)}`]);
  input.setAttribute("aria-label", STRINGS.fieldLabel(current.name, where));
  node.querySelector(".t-confirm").addEventListener("click", () => {
    node.dataset.confirm = "1";
    saver.schedule();
  });
  mark(node, line);
  return node;
}

// Shows a row's state from the server's answer, without touching what is being typed.
function mark(node, line) {
  const stale = line.stale && node.dataset.confirm !== "1";
  node.classList.toggle("stale", stale);
  node.querySelector(".t-stale").hidden = !stale;
  node.querySelector(".t-was").textContent = line.was || "";
  node.querySelector(".t-drafted").hidden = !line.drafted;
  node.querySelector(".t-text").textContent = line.original;
}

function heading(text) {
  return Object.assign(document.createElement("h2"), { className: "t-panel", textContent: text });
}

function render(body) {
  current = body;
  document.getElementById("target-name").textContent = body.name;
  document.getElementById("read-link").href = `/comics/${id}/read/?lang=${encodeURIComponent(body.language)}`;
  const nodes = [heading(STRINGS.title), row(body.title_line, { slot: "title", where: STRINGS.titleOf })];
  let sent = 0; // the panel's position in what a save sends, for its errors
  for (const panel of body.panels) {
    const effects = panel.sfx || [];
    if (!panel.dialogue.length && !panel.caption.original && !effects.length) continue;
    nodes.push(heading(STRINGS.panel(panel.index)));
    panel.dialogue.forEach((line, i) => {
      const node = row(line, {
        slot: "dialogue",
        panel: panel.index,
        position: i,
        who: line.speaker || STRINGS.narration,
        where: STRINGS.lineOf(panel.index, i + 1, line.speaker),
      });
      node.querySelector(".t-error").dataset.errorFor = `panels.${sent}.dialogue.${i}`;
      nodes.push(node);
    });
    if (panel.caption.original) {
      const node = row(panel.caption, { slot: "caption", panel: panel.index, who: STRINGS.caption, where: STRINGS.captionOf(panel.index) });
      node.querySelector(".t-error").dataset.errorFor = `panels.${sent}.caption`;
      nodes.push(node);
    }
    effects.forEach((line, i) => {
      const node = row(line, { slot: "sfx", panel: panel.index, position: i, who: STRINGS.sfx, where: STRINGS.sfxOf(panel.index, i + 1) });
      node.querySelector(".t-error").dataset.errorFor = `panels.${sent}.sfx.${i}`;
      nodes.push(node);
    });
    sent += 1;
  }
  if (!body.panels.some((p) => p.dialogue.length || p.caption.original || p.sfx?.length)) {
    nodes.push(Object.assign(document.createElement("p"), { className: "muted", textContent: STRINGS.noText }));
  }
  lines.replaceChildren(...nodes);
  showCounts(body);
}

function showCounts(body) {
  document.getElementById("counts").textContent = STRINGS.counts(body.missing, body.stale);
}

// A row's line as a save sends it: its text, or {text, stale: false} once confirmed.
function value(node) {
  const text = node.querySelector(".t-input").value.trim();
  return node.dataset.confirm === "1" ? { text, stale: false } : text;
}

function body() {
  const rows = [...lines.querySelectorAll(".t-row")];
  const panels = new Map();
  const out = {};
  for (const node of rows) {
    const { slot, panel, line } = node.dataset;
    if (slot === "title") {
      out.title = value(node);
      continue;
    }
    if (!panels.has(panel)) panels.set(panel, { index: Number(panel), dialogue: [] });
    if (slot === "caption") panels.get(panel).caption = value(node);
    else if (slot === "sfx") (panels.get(panel).sfx ||= [])[Number(line)] = value(node);
    else panels.get(panel).dialogue[Number(line)] = value(node);
  }
  out.panels = [...panels.values()];
  return out;
}

// After a save: every row's marks from the answer; confirmed rows are confirmed now.
function saved(answer) {
  const byPlace = new Map();
  byPlace.set("title:0:0", answer.title_line);
  for (const panel of answer.panels) {
    panel.dialogue.forEach((line, i) => byPlace.set(`dialogue:${panel.index}:${i}`, line));
    byPlace.set(`caption:${panel.index}:0`, panel.caption);
    (panel.sfx || []).forEach((line, i) => byPlace.set(`sfx:${panel.index}:${i}`, line));
  }
  for (const node of lines.querySelectorAll(".t-row")) {
    const { slot, panel, line } = node.dataset;
    const now = byPlace.get(`${slot}:${panel}:${line}`);
    if (!now) continue;
    if (!now.stale) delete node.dataset.confirm;
    mark(node, now);
  }
  current = answer;
  showCounts(answer);
  const summary = summaries.find((t) => t.language === answer.language);
  if (summary) Object.assign(summary, { missing: answer.missing, stale: answer.stale });
  fillSelect(answer.language);
}

const saver = autosaver(async () => {
  if (!current) return true;
  const answer = await api("PUT", url(current.language), body());
  saved(answer);
  return answer;
});

function fillSelect(chosen) {
  select.replaceChildren(...summaries.map((t) => new Option(STRINGS.option(t), t.language, false, t.language === chosen)));
  const taken = new Set(summaries.map((t) => t.language));
  for (const option of addSelect.options) option.hidden = option.disabled = taken.has(option.value);
  if (addSelect.selectedOptions[0]?.disabled) {
    const free = [...addSelect.options].find((o) => !o.disabled);
    if (free) addSelect.value = free.value;
  }
}

async function open(lang) {
  await saver.settle();
  notice.hidden = true;
  const list = await api("GET", `/api/storyboards/${id}/translations/`);
  summaries = list.translations;
  const chosen = summaries.find((t) => t.language === lang) ? lang : summaries[0]?.language;
  fillSelect(chosen);
  document.getElementById("none-yet").hidden = Boolean(chosen);
  editor.hidden = !chosen;
  const address = new URL(location.href);
  if (chosen) address.searchParams.set("lang", chosen);
  else address.searchParams.delete("lang");
  history.replaceState(null, "", address);
  if (!chosen) {
    current = null;
    return;
  }
  render(await api("GET", url(chosen)));
  root.dataset.language = chosen;
}

lines.addEventListener("input", () => saver.schedule());
select.addEventListener("change", () => open(select.value));

document.getElementById("add").addEventListener("click", async () => {
  const lang = addSelect.value;
  try {
    await saver.settle();
    await api("PUT", url(lang), {});
    await open(lang);
  } catch (err) {
    if (err instanceof ApiError) showErrors(err);
  }
});

document.getElementById("delete").addEventListener("click", async () => {
  if (!current || !confirm(STRINGS.confirmDelete(current.name))) return;
  try {
    await saver.settle();
    await api("DELETE", url(current.language));
    current = null;
    await open(null);
  } catch (err) {
    if (err instanceof ApiError) showErrors(err);
  }
});

draftButton?.addEventListener("click", async () => {
  draftButton.disabled = true;
  draftButton.textContent = STRINGS.drafting;
  const inputs = [...lines.querySelectorAll(".t-input")];
  try {
    // What was typed is saved first: the model only fills lines still empty.
    if (!(await saver.settle())) return;
    inputs.forEach((input) => (input.readOnly = true));
    const answer = await api("POST", `${url(current.language)}draft/`, {});
    render(answer);
    const summary = summaries.find((t) => t.language === answer.language);
    if (summary) Object.assign(summary, { missing: answer.missing, stale: answer.stale });
    fillSelect(answer.language);
    notice.textContent = answer.notice;
    notice.hidden = false;
  } catch (err) {
    if (err instanceof ApiError) showErrors(err);
  } finally {
    inputs.forEach((input) => (input.readOnly = false));
    draftButton.disabled = false;
    draftButton.textContent = STRINGS.draft;
  }
});

await open(new URL(location.href).searchParams.get("lang"));
scriptReady();
root.dataset.ready = "1";
