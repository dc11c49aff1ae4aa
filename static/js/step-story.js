import { api, autosaver, showErrors, wizard } from "./api.js";
import { formatNumber, gettext } from "./i18n.js";

const { id } = wizard();
const form = document.getElementById("story-form");
const story = document.getElementById("story");
const count = document.getElementById("story-count");
let storyboardId = id;

const values = () => ({
  title: form.title.value.trim(),
  style: form.style.value,
  story: story.value,
  // A new comic may leave it to the server, which guesses it from the story.
  ...(form.language.value ? { language: form.language.value } : {}),
});

const save = async () => {
  if (!storyboardId) {
    const created = await api("POST", "/api/storyboards/", values());
    storyboardId = created.id;
    history.replaceState(null, "", `/comics/${storyboardId}/story/`);
    return created;
  }
  return api("PATCH", `/api/storyboards/${storyboardId}/`, values());
};
const saver = autosaver(save);

const updateCount = () => (count.textContent = formatNumber(story.value.length));
updateCount();
story.addEventListener("input", updateCount);
form.addEventListener("input", () => {
  if (storyboardId) saver.schedule(); // a new comic is created on Next, once it has a title
});
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!form.title.value.trim()) {
    showErrors({ body: { fields: { title: [gettext("Give your comic a title.")] } } });
    form.title.focus();
    return;
  }
  if (await saver.now()) location.href = `/comics/${storyboardId}/characters/`;
});
