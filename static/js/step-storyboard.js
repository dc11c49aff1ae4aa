import { ApiError, api, autosaver, scriptReady, serverData, showErrors, wizard } from "./api.js";
import { gettext, ngettext, pgettext } from "./i18n.js";
import { askForRoughs, watchRoughs } from "./rough-pages.js";

const { id } = wizard();
const list = document.getElementById("panels");
const cardTemplate = document.getElementById("panel-card");
const lineTemplate = document.getElementById("line-row");
const sfxTemplate = document.getElementById("sfx-row");
// The balloon styles and their labels, from the page (mangagen/lettering/styles.py).
const STYLES = serverData("balloon-styles", []);
// A new sound effect waits in the middle of the panel until it is placed on the picture.
const SFX_DEFAULT = { x: 0.5, y: 0.5, size: 0.14, angle: 0 };
const notice = document.getElementById("notice");
let cast = [];
let places = [];
const POSITIONS = [
  ["", pgettext("where a character stands", "Anywhere")],
  ["left", pgettext("where a character stands", "Left")],
  ["center", pgettext("where a character stands", "Center")],
  ["right", pgettext("where a character stands", "Right")],
];

// For each character present: where they stand (blocking) and, when they have outfits,
// which one they wear. Redrawn when the characters present change, keeping the choices.
function looks(card, panel = null) {
  const box = card.querySelector(".p-looks");
  const chosen = panel || lookChoices(card);
  const present = [...card.querySelectorAll(".p-characters input:checked")].map((b) => b.value);
  box.replaceChildren(
    ...present.map((name) => {
      const character = cast.find((c) => c.name === name) || { outfits: [] };
      const group = document.createElement("fieldset");
      group.className = "p-look";
      group.dataset.name = name;
      group.append(Object.assign(document.createElement("legend"), { textContent: name }));
      const stands = chosen.blocking[name] || "";
      for (const [value, label] of POSITIONS) {
        const option = document.createElement("label");
        const radio = Object.assign(document.createElement("input"), {
          type: "radio",
          name: `stands-${card.dataset.key}-${name}`,
          value,
          checked: value === stands,
          className: "p-stands",
        });
        radio.setAttribute("aria-label", gettext("%(name)s stands: %(where)s", { name, where: label }));
        option.append(radio, ` ${label}`);
        group.append(option);
      }
      if (character.outfits.length) {
        const select = document.createElement("select");
        select.className = "p-outfit";
        select.setAttribute("aria-label", gettext("What %(name)s wears", { name }));
        const wears = chosen.outfits[name] || "";
        for (const [value, label] of [["", gettext("Usual look")], ...character.outfits.map((o) => [o.name, o.name])]) {
          select.append(new Option(label, value, false, value === wears));
        }
        group.append(select);
      }
      return group;
    }),
  );
}

function lookChoices(card) {
  const blocking = {};
  const outfits = {};
  for (const group of card.querySelectorAll(".p-look")) {
    const stands = group.querySelector(".p-stands:checked");
    if (stands && stands.value) blocking[group.dataset.name] = stands.value;
    const outfit = group.querySelector(".p-outfit");
    if (outfit && outfit.value) outfits[group.dataset.name] = outfit.value;
  }
  return { blocking, outfits };
}

let cardKeys = 0;

function speakerOptions(select, chosen) {
  const options = [["", gettext("Narration")], ...cast.map((c) => [c.name, c.name])];
  select.replaceChildren(
    ...options.map(([value, label]) => {
      const option = new Option(label, value, false, value === chosen);
      return option;
    }),
  );
}

function addLine(card, line = { speaker: "", text: "" }, focus = false) {
  const row = lineTemplate.content.firstElementChild.cloneNode(true);
  speakerOptions(row.querySelector(".l-speaker"), line.speaker);
  row.querySelector(".l-text").value = line.text;
  const style = row.querySelector(".l-style");
  for (const [value, label] of STYLES) style.append(new Option(label, value, false, value === (line.style || "speech")));
  // The balloon's place is set on the panel's picture (lettering.js): kept as it is.
  row.dataset.balloon = JSON.stringify({ place: line.place || null });
  row.querySelector(".l-speaker").addEventListener("change", (event) => {
    // Whoever speaks is in the panel.
    const box = card.querySelector(`.p-characters input[value="${CSS.escape(event.target.value)}"]`);
    if (box && !box.checked) {
      box.checked = true;
      looks(card);
    }
  });
  row.querySelector(".remove").addEventListener("click", () => {
    row.remove();
    renumber();
    saver.schedule();
  });
  card.querySelector(".lines").append(row);
  renumber();
  if (focus) row.querySelector(".l-text").focus();
}

// A sound effect's row: its text here; where it goes and how large, on the panel's
// picture (lettering.js), kept as they are.
function addSfx(card, effect = { text: "", ...SFX_DEFAULT }, focus = false) {
  const row = sfxTemplate.content.firstElementChild.cloneNode(true);
  const { text, ...where } = effect;
  row.dataset.effect = JSON.stringify(where);
  row.querySelector(".s-text").value = text;
  row.querySelector(".remove").addEventListener("click", () => {
    row.remove();
    renumber();
    saver.schedule();
  });
  card.querySelector(".p-sfx").append(row);
  renumber();
  if (focus) row.querySelector(".s-text").focus();
}

function addPanel(panel = {}, after = null) {
  const card = cardTemplate.content.firstElementChild.cloneNode(true);
  card.querySelector(".p-description").value = panel.description || "";
  card.querySelector(".p-shot").value = panel.shot || "medium";
  card.querySelector(".p-caption").value = panel.caption || "";
  card.dataset.key = String(++cardKeys);
  const place = card.querySelector(".p-place");
  for (const p of places) place.append(new Option(p.name, p.name, false, p.name === panel.place));
  const present = new Set(panel.characters || []);
  const fieldset = card.querySelector(".p-characters");
  if (!cast.length) fieldset.append(Object.assign(document.createElement("span"), { className: "muted", textContent: gettext("No characters yet") }));
  for (const c of cast) {
    const label = document.createElement("label");
    label.className = "check";
    const box = Object.assign(document.createElement("input"), { type: "checkbox", value: c.name, checked: present.has(c.name) });
    label.append(box, ` ${c.name}`);
    fieldset.append(label);
  }
  looks(card, { blocking: panel.blocking || {}, outfits: panel.outfits || {} });
  fieldset.addEventListener("change", () => looks(card));
  (panel.dialogue || []).forEach((line) => addLine(card, line));
  card.querySelector(".add-line").addEventListener("click", () => addLine(card, undefined, true));
  (panel.sfx || []).forEach((effect) => addSfx(card, effect));
  card.querySelector(".add-sfx").addEventListener("click", () => addSfx(card, undefined, true));
  card.querySelector(".remove").addEventListener("click", () => {
    card.remove();
    renumber();
    saver.schedule();
  });
  card.querySelector(".up").addEventListener("click", () => {
    if (card.previousElementSibling) list.insertBefore(card, card.previousElementSibling);
    renumber();
    saver.schedule();
  });
  card.querySelector(".down").addEventListener("click", () => {
    if (card.nextElementSibling) list.insertBefore(card.nextElementSibling, card);
    renumber();
    saver.schedule();
  });
  if (after) after.after(card);
  else list.append(card);
  renumber();
  return card;
}

function renumber() {
  [...list.children].forEach((card, i) => {
    const number = i + 1;
    card.querySelector(".p-title").textContent = gettext("Panel %(index)s", { index: number });
    card.querySelector(".up").disabled = i === 0;
    card.querySelector(".down").disabled = i === list.children.length - 1;
    // Icon-only buttons and unlabelled line fields are named for screen readers, by panel and line.
    card.querySelector(".up").setAttribute("aria-label", gettext("Move panel %(index)s up", { index: number }));
    card.querySelector(".down").setAttribute("aria-label", gettext("Move panel %(index)s down", { index: number }));
    card.querySelector("header .remove").setAttribute("aria-label", gettext("Remove panel %(index)s", { index: number }));
    const addSfxButton = card.querySelector(".add-sfx");
    addSfxButton.disabled = card.querySelectorAll(".sfx-row").length >= Number(addSfxButton.dataset.max || 8);
    for (const field of ["description", "characters", "dialogue", "caption", "sfx"]) {
      card.querySelector(`.p-${field}-error`).dataset.errorFor = `panels.${i}.${field}`;
    }
    [...card.querySelectorAll(".line-row")].forEach((row, j) => {
      row.querySelector(".l-error").dataset.errorFor = `panels.${i}.dialogue.${j}.text`;
      const line = gettext("panel %(index)s, line %(line)s", { index: number, line: j + 1 });
      row.querySelector(".l-speaker").setAttribute("aria-label", gettext("Speaker, %(line)s", { line }));
      row.querySelector(".l-text").setAttribute("aria-label", gettext("What they say, %(line)s", { line }));
      row.querySelector(".l-style").setAttribute("aria-label", gettext("Balloon style, %(line)s", { line }));
      row.querySelector(".remove").setAttribute("aria-label", gettext("Remove %(line)s", { line }));
    });
    [...card.querySelectorAll(".sfx-row")].forEach((row, k) => {
      row.querySelector(".s-error").dataset.errorFor = `panels.${i}.sfx.${k}.text`;
      const effect = gettext("panel %(index)s, sound effect %(number)s", { index: number, number: k + 1 });
      row.querySelector(".s-text").setAttribute("aria-label", gettext("Sound effect, %(effect)s", { effect }));
      row.querySelector(".remove").setAttribute("aria-label", gettext("Remove %(effect)s", { effect }));
    });
  });
}

const panels = () =>
  [...list.children].map((card) => ({
    description: card.querySelector(".p-description").value.trim(),
    shot: card.querySelector(".p-shot").value,
    characters: [...card.querySelectorAll(".p-characters input:checked")].map((b) => b.value),
    dialogue: [...card.querySelectorAll(".line-row")]
      .map((row) => ({
        ...JSON.parse(row.dataset.balloon || "{}"),
        speaker: row.querySelector(".l-speaker").value,
        text: row.querySelector(".l-text").value.trim(),
        style: row.querySelector(".l-style").value,
      }))
      .filter((line) => line.text),
    caption: card.querySelector(".p-caption").value.trim(),
    sfx: [...card.querySelectorAll(".sfx-row")]
      .map((row) => ({ ...JSON.parse(row.dataset.effect || "{}"), text: row.querySelector(".s-text").value.trim() }))
      .filter((effect) => effect.text),
    place: card.querySelector(".p-place").value,
    ...lookChoices(card),
  }));

const saver = autosaver(() => api("PATCH", `/api/storyboards/${id}/`, { panels: panels() }));

function render(storyboard) {
  cast = storyboard.characters;
  places = storyboard.places;
  list.replaceChildren();
  storyboard.panels.forEach((p) => addPanel(p));
}

render(await api("GET", `/api/storyboards/${id}/`));

list.addEventListener("input", () => saver.schedule());
list.addEventListener("change", () => saver.schedule());
document.getElementById("add-panel").addEventListener("click", () => {
  addPanel({ shot: "medium" }).querySelector(".p-description").focus();
  saver.schedule();
});
document.getElementById("draft").addEventListener("click", async (event) => {
  // Ask only when a fresh draft would throw away something the person wrote.
  const written = panels().some((p) => p.description || p.dialogue.length || p.caption);
  if (written && !confirm(gettext("Replace the current panels with a fresh draft from your story?"))) return;
  const button = event.currentTarget;
  button.disabled = true;
  button.textContent = gettext("Drafting…");
  try {
    // A save of the panels still on its way would land after the draft and
    // bring the old panels back on the server.
    await saver.settle();
    const drafted = await api("POST", `/api/storyboards/${id}/draft/`, {});
    render(drafted);
    notice.textContent =
      drafted.notice ||
      ngettext(
        "Drafted %(count)s panel from your story. Edit anything you like.",
        "Drafted %(count)s panels from your story. Edit anything you like.",
        drafted.panels.length,
      );
    notice.hidden = false;
  } catch (err) {
    if (err instanceof ApiError) showErrors(err);
  } finally {
    button.disabled = false;
    button.textContent = gettext("Draft from story");
  }
});
// Roughs on demand: a free pencil draft of every panel (its composition before it is paid
// for), shown on its card as it lands; a panel whose picture changed gets a new one when
// asked again (its text alone keeps it). Pushed by the comic's stream (rough-pages.js).
const ROUGH_STATES = {
  queued: gettext("Its rough is waiting for the draft model."),
  drawing: gettext("Its rough is being drawn…"),
  ready: gettext("Its rough is drawn."),
  failed: gettext("Its rough could not be drawn; draw it again."),
};
let roughWatch = null;
async function showRoughs() {
  const [fresh, body] = await Promise.all([
    api("GET", `/api/storyboards/${id}/`),
    api("GET", `/api/storyboards/${id}/roughs/`),
  ]).catch(() => [null, null]);
  if (!fresh) return;
  const byIndex = new Map(body.roughs.map((r) => [r.index, r]));
  [...list.children].forEach((card, i) => {
    const panel = fresh.panels[i];
    const rough = panel && byIndex.get(panel.index);
    const current = rough && rough.art_hash === panel.art_hash ? rough : null;
    const figure = card.querySelector(".p-rough");
    figure.hidden = !current;
    if (!current) return;
    figure.dataset.state = current.state;
    const img = figure.querySelector("img");
    img.hidden = !current.image_url;
    img.alt = gettext("Rough of panel %(index)s", { index: panel.index });
    if (current.image_url && img.getAttribute("src") !== current.image_url) img.src = current.image_url;
    figure.querySelector("figcaption").textContent = ROUGH_STATES[current.state] || "";
  });
}
document.getElementById("draw-roughs").addEventListener("click", async (event) => {
  const button = event.currentTarget;
  button.disabled = true;
  try {
    if (!(await saver.now())) return;
    const answer = await askForRoughs(id);
    if (answer && answer.refused) {
      notice.textContent = answer.refused.message;
      notice.hidden = false;
      if (answer.refused.status === 402) return;
    }
    roughWatch = roughWatch || watchRoughs(id, { onRoughs: showRoughs, onRough: showRoughs });
    roughWatch.expect();
    await showRoughs();
  } catch (err) {
    if (err instanceof ApiError) showErrors(err);
  } finally {
    button.disabled = false;
  }
});
document.getElementById("next").addEventListener("click", async () => {
  if (await saver.now()) location.href = `/comics/${id}/review/`;
});
document.getElementById("back").addEventListener("click", async (event) => {
  event.preventDefault();
  if (await saver.now()) location.href = event.currentTarget.href;
});
scriptReady();
