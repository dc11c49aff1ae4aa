import { ApiError, api, autosaver, csrfToken, refreshNavCredits, scriptReady, showOutOfCredits, wizard } from "./api.js";

const { id } = wizard();
const list = document.getElementById("characters");
const template = document.getElementById("character-row");
const chips = document.getElementById("suggestion-chips");
const suggestions = document.getElementById("suggestions");

function addRow(character = { name: "", description: "" }, focus = false) {
  const row = template.content.firstElementChild.cloneNode(true);
  row.querySelector(".c-name").value = character.name;
  row.querySelector(".c-description").value = character.description;
  wireSheet(row);
  showSheet(row, character.sheet || null);
  row.querySelector(".remove").addEventListener("click", () => {
    row.remove();
    renumber();
    saver.schedule();
  });
  list.append(row);
  renumber();
  if (focus) row.querySelector(".c-name").focus();
}

function renumber() {
  [...list.children].forEach((row, i) => {
    row.querySelector(".c-name-error").dataset.errorFor = `characters.${i}.name`;
    row.querySelector(".c-description-error").dataset.errorFor = `characters.${i}.description`;
  });
}

const characters = () =>
  [...list.children]
    .map((row) => ({
      name: row.querySelector(".c-name").value.trim(),
      description: row.querySelector(".c-description").value.trim(),
    }))
    .filter((c) => c.name || c.description);

// A saved description may make a sheet stale (or current again): the answer says which.
const saver = autosaver(() =>
  api("PATCH", `/api/storyboards/${id}/`, { characters: characters() }).then(applySheets),
);

function showSuggestions(names) {
  const taken = new Set(characters().map((c) => c.name.toLowerCase()));
  const fresh = names.filter((n) => !taken.has(n.toLowerCase()));
  chips.replaceChildren(
    ...fresh.map((name) => {
      const chip = document.createElement("button");
      chip.type = "button";
      chip.className = "chip";
      chip.textContent = `+ ${name}`;
      chip.addEventListener("click", () => {
        addRow({ name, description: "" });
        chip.remove();
        suggestions.hidden = !chips.children.length;
        saver.schedule();
      });
      return chip;
    }),
  );
  suggestions.hidden = !fresh.length;
}

// --- character sheets: render, redo, upload, remove; shown as soon as they are ready ---

const SHEET_WORDS = {
  none: "No character sheet yet.",
  rendering: "Rendering the sheet…",
  ready: "Sheet ready: every panel with this character is drawn from it.",
  stale: "The description changed since this sheet was drawn: redo it to use it again.",
  failed: "The sheet could not be rendered; your credit was given back.",
};

const sheetUrl = (row) =>
  `/api/storyboards/${id}/characters/${encodeURIComponent(row.dataset.savedName)}/sheet/`;

function showSheet(row, sheet) {
  const box = row.querySelector(".c-sheet");
  const state = sheet ? sheet.state : "none";
  box.dataset.state = state;
  const image = row.querySelector(".c-sheet-image");
  image.hidden = !(sheet && sheet.image_url);
  if (sheet && sheet.image_url && image.getAttribute("src") !== sheet.image_url) {
    image.src = sheet.image_url;
    image.alt = `Character sheet of ${row.querySelector(".c-name").value}`;
  }
  let words = SHEET_WORDS[state];
  if (state === "failed" && sheet.error) words = `${words} (${sheet.error})`;
  if (state === "ready" && sheet.source === "uploaded") words = "Your picture is the sheet: every panel with this character is drawn from it.";
  row.querySelector(".c-sheet-state").textContent = words;
  const render = row.querySelector(".c-sheet-render");
  render.textContent = sheet && sheet.hash ? "Redo sheet (1 credit)" : "Render sheet (1 credit)";
  render.disabled = state === "rendering";
  row.querySelector(".c-sheet-remove").hidden = !sheet;
}

async function sheetAction(row, work) {
  const error = row.querySelector(".c-sheet-error");
  error.textContent = "";
  if (!row.querySelector(".c-name").value.trim()) {
    error.textContent = "Give the character a name first.";
    return;
  }
  if (!(await saver.now())) return;
  row.dataset.savedName = row.querySelector(".c-name").value.trim();
  try {
    await work();
  } catch (err) {
    const words = { before: `${err.message} `, link: "Buy credits" };
    if (!showOutOfCredits(err, error, words)) error.textContent = err.message;
  }
  await refreshSheets();
}

function wireSheet(row) {
  row.querySelector(".c-sheet-render").addEventListener("click", () =>
    sheetAction(row, async () => showSheet(row, (await api("POST", sheetUrl(row))).sheet)),
  );
  row.querySelector(".c-sheet-remove").addEventListener("click", () =>
    sheetAction(row, () => api("DELETE", sheetUrl(row))),
  );
  const upload = row.querySelector(".c-sheet-upload");
  upload.addEventListener("change", () => {
    const file = upload.files[0];
    if (!file) return;
    sheetAction(row, async () => {
      const body = new FormData();
      body.append("image", file);
      const response = await fetch(sheetUrl(row), {
        method: "PUT",
        body,
        credentials: "same-origin",
        headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
      });
      const data = await response.json().catch(() => null);
      upload.value = "";
      if (!response.ok) throw new ApiError(response.status, data);
      showSheet(row, data.sheet);
    });
  });
}

// While a sheet renders, the storyboard is read again until none is rendering.
let polling = null;
async function refreshSheets() {
  const fresh = await api("GET", `/api/storyboards/${id}/`).catch(() => null);
  if (!fresh) return;
  const rendering = applySheets(fresh);
  refreshNavCredits(); // the header's balance: a sheet's hold, capture or release changes it
  clearTimeout(polling);
  polling = rendering ? setTimeout(refreshSheets, 1000) : null;
}

// Shows each character's sheet from a storyboard; says whether one is still rendering.
function applySheets(fresh) {
  const byName = new Map(fresh.characters.map((c) => [c.name, c.sheet]));
  for (const row of list.children) {
    const name = row.querySelector(".c-name").value.trim();
    if (byName.has(name)) showSheet(row, byName.get(name));
  }
  return fresh.characters.some((c) => c.sheet && c.sheet.state === "rendering");
}

const storyboard = await api("GET", `/api/storyboards/${id}/`);
storyboard.characters.forEach((c) => addRow(c));
for (const row of list.children) row.dataset.savedName = row.querySelector(".c-name").value.trim();
if (storyboard.characters.some((c) => c.sheet && c.sheet.state === "rendering")) refreshSheets();
if (!storyboard.characters.length && !storyboard.suggested_characters.length) addRow();
showSuggestions(storyboard.suggested_characters);

list.addEventListener("input", () => saver.schedule());
document.getElementById("add-character").addEventListener("click", () => addRow(undefined, true));
document.getElementById("next").addEventListener("click", async () => {
  if (await saver.now()) location.href = `/comics/${id}/storyboard/`;
});
document.getElementById("back").addEventListener("click", async (event) => {
  event.preventDefault();
  if (await saver.now()) location.href = event.currentTarget.href;
});
scriptReady();
