import { api, autosaver, refreshNavCredits, scriptReady, showOutOfCredits, wizard } from "./api.js";
import { gettext, ngettext } from "./i18n.js";
import { price } from "./prices.js";

const { id } = wizard();
const list = document.getElementById("characters");
const template = document.getElementById("character-row");
const outfitTemplate = document.getElementById("outfit-row");
const placeList = document.getElementById("places");
const placeTemplate = document.getElementById("place-row");
const chips = document.getElementById("suggestion-chips");
const suggestions = document.getElementById("suggestions");
const MAX_OUTFITS = 3;

function addRow(character = { name: "", description: "", outfits: [] }, focus = false) {
  const row = template.content.firstElementChild.cloneNode(true);
  row.querySelector(".c-name").value = character.name;
  row.querySelector(".c-description").value = character.description;
  wireSheet(row);
  showSheet(row, character.sheet || null);
  (character.outfits || []).forEach((outfit) => addOutfit(row, outfit));
  row.querySelector(".c-add-outfit").addEventListener("click", () => {
    addOutfit(row, { name: "", description: "" }).querySelector(".o-name").focus();
  });
  row.querySelector(".c-save").addEventListener("click", () => saveToLibrary(row, "cast"));
  row.querySelector(".remove").addEventListener("click", () => {
    row.remove();
    renumber();
    saver.schedule();
  });
  list.append(row);
  renumber();
  if (focus) row.querySelector(".c-name").focus();
}

function addOutfit(row, outfit) {
  const line = outfitTemplate.content.firstElementChild.cloneNode(true);
  line.querySelector(".o-name").value = outfit.name;
  line.querySelector(".o-description").value = outfit.description;
  line.dataset.savedName = outfit.name;
  showOutfitSheet(line, outfit.sheet || null);
  line.querySelector(".o-remove").addEventListener("click", () => {
    line.remove();
    renumber();
    saver.schedule();
  });
  line.querySelector(".o-sheet-render").addEventListener("click", () =>
    sheetAction(row, async () => {
      if (!line.querySelector(".o-name").value.trim()) throw new Error(gettext("Name the outfit first."));
      line.dataset.savedName = line.querySelector(".o-name").value.trim();
      showOutfitSheet(line, (await api("POST", sheetUrl(row, line.dataset.savedName))).sheet);
    }, line.querySelector(".o-error")),
  );
  row.querySelector(".c-outfits").append(line);
  renumber();
  return line;
}

function renumber() {
  [...list.children].forEach((row, i) => {
    row.querySelector(".c-name-error").dataset.errorFor = `characters.${i}.name`;
    row.querySelector(".c-description-error").dataset.errorFor = `characters.${i}.description`;
    const outfits = [...row.querySelectorAll(".outfit-row")];
    outfits.forEach((line, j) => (line.querySelector(".o-error").dataset.errorFor = `characters.${i}.outfits.${j}.name`));
    row.querySelector(".c-add-outfit").hidden = outfits.length >= MAX_OUTFITS;
  });
  [...placeList.children].forEach((row, i) => {
    row.querySelector(".p-name-error").dataset.errorFor = `places.${i}.name`;
    row.querySelector(".p-description-error").dataset.errorFor = `places.${i}.description`;
  });
}

const characters = () =>
  [...list.children]
    .map((row) => ({
      name: row.querySelector(".c-name").value.trim(),
      description: row.querySelector(".c-description").value.trim(),
      outfits: [...row.querySelectorAll(".outfit-row")]
        .map((line) => ({ name: line.querySelector(".o-name").value.trim(), description: line.querySelector(".o-description").value.trim() }))
        .filter((o) => o.name || o.description),
    }))
    .filter((c) => c.name || c.description);

const places = () =>
  [...placeList.children]
    .map((row) => ({
      name: row.querySelector(".p-name").value.trim(),
      description: row.querySelector(".p-description").value.trim(),
    }))
    .filter((p) => p.name || p.description);

// A saved description may make a sheet stale (or current again): the answer says which.
const saver = autosaver(() =>
  api("PATCH", `/api/storyboards/${id}/`, { characters: characters(), places: places() }).then(applySheets),
);

function showSuggestions(names) {
  const taken = new Set(characters().map((c) => c.name.toLowerCase()));
  const fresh = names.filter((n) => !taken.has(n.toLowerCase()));
  chips.replaceChildren(
    ...fresh.map((name) => {
      const chip = document.createElement("button");
      chip.type = "button";
      chip.className = "chip";
      chip.textContent = gettext("+ %(name)s", { name });
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
  none: gettext("No character sheet yet."),
  rendering: gettext("Rendering the sheet…"),
  ready: gettext("Sheet ready: every panel with this character is drawn from it."),
  stale: gettext("The description changed since this sheet was drawn: redo it to use it again."),
  failed: gettext("The sheet could not be rendered; your credit was given back."),
};
const OUTFIT_WORDS = {
  none: gettext("No sheet of this outfit."),
  rendering: gettext("Rendering the outfit's sheet…"),
  ready: gettext("Outfit sheet ready."),
  stale: gettext("The outfit changed since its sheet was drawn."),
  failed: gettext("The outfit's sheet could not be rendered; your credit was given back."),
};

const sheetUrl = (row, outfit = "") =>
  `/api/storyboards/${id}/characters/${encodeURIComponent(row.dataset.savedName)}/sheet/` +
  (outfit ? `?outfit=${encodeURIComponent(outfit)}` : "");

function showSheet(row, sheet) {
  const box = row.querySelector(".c-sheet");
  const state = sheet ? sheet.state : "none";
  box.dataset.state = state;
  const image = row.querySelector(".c-sheet-image");
  image.hidden = !(sheet && sheet.image_url);
  if (sheet && sheet.image_url && image.getAttribute("src") !== sheet.image_url) {
    image.src = sheet.image_url;
    image.alt = gettext("Character sheet of %(name)s", { name: row.querySelector(".c-name").value });
  }
  let words = SHEET_WORDS[state];
  if (state === "failed" && sheet.error) words = gettext("%(words)s (%(error)s)", { words, error: sheet.error });
  if (state === "ready" && sheet.source === "uploaded") {
    words = gettext("Your picture is the sheet: every panel with this character is drawn from it.");
  }
  row.querySelector(".c-sheet-state").textContent = words;
  const render = row.querySelector(".c-sheet-render");
  const credits = price("sheet");
  render.textContent = sheet && sheet.hash
    ? ngettext("Redo sheet (%(count)s credit)", "Redo sheet (%(count)s credits)", credits)
    : ngettext("Render sheet (%(count)s credit)", "Render sheet (%(count)s credits)", credits);
  render.disabled = state === "rendering";
  row.querySelector(".c-sheet-remove").hidden = !sheet;
}

function showOutfitSheet(line, sheet) {
  const state = sheet ? sheet.state : "none";
  const status = line.querySelector(".o-sheet");
  status.dataset.state = state;
  status.textContent = OUTFIT_WORDS[state];
  line.querySelector(".o-sheet-render").disabled = state === "rendering";
}

async function sheetAction(row, work, error = row.querySelector(".c-sheet-error")) {
  error.textContent = "";
  if (!row.querySelector(".c-name").value.trim()) {
    error.textContent = gettext("Give the character a name first.");
    return;
  }
  if (!(await saver.now())) return;
  row.dataset.savedName = row.querySelector(".c-name").value.trim();
  try {
    await work();
  } catch (err) {
    const words = { before: `${err.message} `, link: gettext("Buy credits") };
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
      const data = await putImage(sheetUrl(row), file);
      upload.value = "";
      showSheet(row, data.sheet);
    });
  });
}

// A picture sent as the multipart field `image` (a sheet, or a place's picture).
function putImage(url, file) {
  const body = new FormData();
  body.append("image", file);
  return api("PUT", url, body);
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

// Shows each character's (and outfit's) sheet and each place's picture from a storyboard;
// says whether a sheet is still rendering.
function applySheets(fresh) {
  const byName = new Map(fresh.characters.map((c) => [c.name, c]));
  for (const row of list.children) {
    const character = byName.get(row.querySelector(".c-name").value.trim());
    if (!character) continue;
    showSheet(row, character.sheet);
    const outfits = new Map(character.outfits.map((o) => [o.name, o.sheet]));
    for (const line of row.querySelectorAll(".outfit-row")) {
      const name = line.querySelector(".o-name").value.trim();
      if (outfits.has(name)) showOutfitSheet(line, outfits.get(name));
    }
  }
  const pictures = new Map(fresh.places.map((p) => [p.name, p.picture]));
  for (const row of placeList.children) {
    const name = row.querySelector(".p-name").value.trim();
    if (pictures.has(name)) showPicture(row, pictures.get(name));
  }
  return fresh.characters.some(
    (c) => (c.sheet && c.sheet.state === "rendering") || c.outfits.some((o) => o.sheet && o.sheet.state === "rendering"),
  );
}

// --- places: name, description, an optional picture of the person's own ---

function addPlace(place = { name: "", description: "", picture: null }, focus = false) {
  const row = placeTemplate.content.firstElementChild.cloneNode(true);
  row.querySelector(".p-name").value = place.name;
  row.querySelector(".p-description").value = place.description;
  showPicture(row, place.picture);
  const url = () => `/api/storyboards/${id}/places/${encodeURIComponent(row.querySelector(".p-name").value.trim())}/picture/`;
  const error = row.querySelector(".p-picture-error");
  const act = async (work) => {
    error.textContent = "";
    if (!row.querySelector(".p-name").value.trim()) {
      error.textContent = gettext("Name the place first.");
      return;
    }
    if (!(await saver.now())) return;
    try {
      await work();
    } catch (err) {
      error.textContent = err.message;
    }
  };
  const upload = row.querySelector(".p-upload");
  upload.addEventListener("change", () => {
    const file = upload.files[0];
    if (!file) return;
    act(async () => {
      const data = await putImage(url(), file);
      upload.value = "";
      showPicture(row, data.place.picture);
    });
  });
  row.querySelector(".p-picture-remove").addEventListener("click", () =>
    act(async () => {
      await api("DELETE", url());
      showPicture(row, null);
    }),
  );
  row.querySelector(".p-save").addEventListener("click", () => saveToLibrary(row, "places"));
  row.querySelector(".remove").addEventListener("click", () => {
    row.remove();
    renumber();
    saver.schedule();
  });
  placeList.append(row);
  renumber();
  if (focus) row.querySelector(".p-name").focus();
}

function showPicture(row, picture) {
  const image = row.querySelector(".p-picture");
  image.hidden = !picture;
  if (picture && image.getAttribute("src") !== picture.image_url) {
    image.src = picture.image_url;
    image.alt = gettext("Picture of %(name)s", { name: row.querySelector(".p-name").value });
  }
  row.querySelector(".p-picture-remove").hidden = !picture;
}

// --- the library: save a character or place for other comics; add one from it ---

async function saveToLibrary(row, kind) {
  const cast = kind === "cast";
  const name = row.querySelector(cast ? ".c-name" : ".p-name").value.trim();
  const said = row.querySelector(cast ? ".c-saved" : ".p-saved");
  if (!name || !(await saver.now())) return;
  try {
    await api("POST", `/api/${kind}/`, { storyboard: Number(id), name });
    said.textContent = cast ? gettext("Saved to your cast.") : gettext("Saved to your places.");
    loadLibrary();
  } catch (err) {
    said.textContent = err.message;
  }
}

async function loadLibrary() {
  const [cast, saved] = await Promise.all([
    api("GET", "/api/cast/").catch(() => []),
    api("GET", "/api/places/").catch(() => []),
  ]);
  offer(cast, characters(), "cast-library", "cast-chips", "cast");
  offer(saved, places(), "places-library", "place-chips", "place");
}

function offer(entries, present, boxId, chipsId, field) {
  const taken = new Set(present.map((item) => item.name.toLowerCase()));
  const fresh = entries.filter((entry) => !taken.has(entry.name.toLowerCase()));
  const box = document.getElementById(boxId);
  document.getElementById(chipsId).replaceChildren(
    ...fresh.map((entry) => {
      const chip = document.createElement("button");
      chip.type = "button";
      chip.className = "chip";
      chip.textContent = gettext("+ %(name)s", { name: entry.name });
      chip.title = entry.sheet ? gettext("With their character sheet: no new credit") : entry.description;
      chip.addEventListener("click", () => addFromLibrary(field, entry.id));
      return chip;
    }),
  );
  box.hidden = !fresh.length;
}

async function addFromLibrary(field, entryId) {
  const error = document.getElementById("cast-error");
  error.textContent = "";
  if (!(await saver.now())) return;
  const url = `/api/storyboards/${id}/${field === "cast" ? "characters" : "places"}/`;
  try {
    await api("POST", url, { [field]: entryId });
  } catch (err) {
    error.textContent = err.message;
    return;
  }
  show(await api("GET", `/api/storyboards/${id}/`));
  loadLibrary();
}

function show(storyboard) {
  list.replaceChildren();
  placeList.replaceChildren();
  storyboard.characters.forEach((c) => addRow(c));
  for (const row of list.children) row.dataset.savedName = row.querySelector(".c-name").value.trim();
  storyboard.places.forEach((p) => addPlace(p));
}

const storyboard = await api("GET", `/api/storyboards/${id}/`);
show(storyboard);
if (applySheets(storyboard)) refreshSheets();
if (!storyboard.characters.length && !storyboard.suggested_characters.length) addRow();
showSuggestions(storyboard.suggested_characters);
loadLibrary();

list.addEventListener("input", () => saver.schedule());
placeList.addEventListener("input", () => saver.schedule());
document.getElementById("add-character").addEventListener("click", () => addRow(undefined, true));
document.getElementById("add-place").addEventListener("click", () => addPlace(undefined, true));
document.getElementById("next").addEventListener("click", async () => {
  if (await saver.now()) location.href = `/comics/${id}/storyboard/`;
});
document.getElementById("back").addEventListener("click", async (event) => {
  event.preventDefault();
  if (await saver.now()) location.href = event.currentTarget.href;
});
scriptReady();
