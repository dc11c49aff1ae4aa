import { api, autosaver, scriptReady, wizard } from "./api.js";

const { id } = wizard();
const list = document.getElementById("characters");
const template = document.getElementById("character-row");
const chips = document.getElementById("suggestion-chips");
const suggestions = document.getElementById("suggestions");

function addRow(character = { name: "", description: "" }, focus = false) {
  const row = template.content.firstElementChild.cloneNode(true);
  row.querySelector(".c-name").value = character.name;
  row.querySelector(".c-description").value = character.description;
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

const saver = autosaver(() => api("PATCH", `/api/storyboards/${id}/`, { characters: characters() }));

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

const storyboard = await api("GET", `/api/storyboards/${id}/`);
storyboard.characters.forEach((c) => addRow(c));
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
