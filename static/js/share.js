// The owner's reading link (docs/api.md, "Reading links"): Share publishes what is shown
// now and gives the link to copy; Publish again moves the same link to the current
// version; Stop sharing ends it at once.
import { api } from "./api.js";
import { gettext } from "./i18n.js";

const STRINGS = {
  copied: gettext("Link copied."),
  stopped: gettext("No longer shared: the link answers “not found”."),
  published: (version) => gettext("Published (version %(version)s).", { version }),
};

const root = document.getElementById("share");
const endpoint = root.dataset.publish;
const link = document.getElementById("share-link");
const download = document.getElementById("share-download");
const say = (text) => { document.getElementById("share-status").textContent = text; };

function show(shared) {
  document.getElementById("share-published").hidden = !shared;
  document.getElementById("share-button").hidden = Boolean(shared);
  root.dataset.state = shared ? "published" : "private";
  if (!shared) return;
  link.value = new URL(shared.url, location.origin).href;
  download.checked = shared.allow_download;
}

async function publish() {
  try {
    const shared = await api("POST", endpoint, { allow_download: download.checked });
    show(shared);
    say(STRINGS.published(shared.version));
  } catch (err) {
    say(err.message);
  }
}

document.getElementById("share-button").addEventListener("click", publish);
document.getElementById("share-again").addEventListener("click", publish);
download.addEventListener("change", () => { if (root.dataset.state === "published") publish(); });
document.getElementById("share-stop").addEventListener("click", async () => {
  await api("DELETE", endpoint);
  show(null);
  say(STRINGS.stopped);
});
document.getElementById("share-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(link.value);
  } catch {
    link.select(); // no clipboard (an insecure origin): the link is selected to copy by hand
  }
  say(STRINGS.copied);
});

show((await api("GET", endpoint)).link);
root.dataset.ready = "1";
