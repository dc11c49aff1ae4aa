import { api, csrfToken, refreshNavCredits, serverData, showOutOfCredits, wizard } from "./api.js";
import { gettext, ngettext } from "./i18n.js";
import { roughPages } from "./rough-pages.js";

const { id } = wizard();
const grid = document.getElementById("review-panels");
const generate = document.getElementById("generate");
const prompt = document.getElementById("purchase-prompt");

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function panelView(panel, shots) {
  const card = el("article", "review-panel");
  card.dataset.index = panel.index;
  const head = el("header", "row between");
  head.append(el("h2", "", gettext("Panel %(index)s", { index: panel.index })), el("span", "tag", shots[panel.shot] || panel.shot));
  card.append(head);
  if (panel.caption) card.append(el("p", "caption-box", panel.caption));
  card.append(el("p", "description", panel.description || gettext("(no description yet)")));
  if (panel.characters.length) {
    card.append(el("p", "muted small", gettext("With %(names)s", { names: panel.characters.join(gettext(", ")) })));
  }
  for (const line of panel.dialogue) {
    const style = line.style || "speech";
    // A styled line is a balloon whoever says it (as the lettering draws it).
    const boxed = !line.speaker && style === "speech";
    const balloon = el("p", boxed ? "narration" : "balloon");
    if (!boxed) balloon.classList.add(`style-${style}`); // drawn as its style (app.css)
    balloon.dataset.style = style;
    if (line.speaker) balloon.append(el("strong", "", gettext("%(speaker)s: ", { speaker: line.speaker })));
    balloon.append(document.createTextNode(line.text));
    if (!boxed) balloon.append(el("span", "style-tag", `(${styleNames[style] || style})`));
    card.append(balloon);
  }
  if (panel.sfx && panel.sfx.length) {
    const effects = el("p", "sfx-line");
    effects.append(
      el("span", "sfx-tag", gettext("Sound effects:")),
      " ",
      el("span", "sfx-list", panel.sfx.map((effect) => effect.text).join(gettext(", "))),
    );
    card.append(effects);
  }
  return card;
}

// The balloon styles' names, from the page (mangagen/lettering/styles.py).
const styleNames = Object.fromEntries(serverData("balloon-styles", []));

const shots = Object.fromEntries(serverData("shot-names", []));
// The job states in which work is still under way, from the server's enum (LIVE_STATES).
const LIVE = serverData("live-job-states", []);
const storyboard = await api("GET", `/api/storyboards/${id}/`);
grid.replaceChildren(...storyboard.panels.map((p) => panelView(p, shots)));
document.getElementById("review-summary").textContent = ngettext(
  "%(title)s: %(count)s panel, drawn one at a time. Each panel costs one credit when it is rendered and shown to you; panels already drawn are kept and cost nothing.",
  "%(title)s: %(count)s panels, drawn one at a time. Each panel costs one credit when it is rendered and shown to you; panels already drawn are kept and cost nothing.",
  storyboard.panels.length,
  { title: storyboard.title, count: storyboard.panels.length },
);
document.getElementById("incomplete").hidden = storyboard.complete;
generate.disabled = !storyboard.complete;

// The quote: exactly what Generate will render and charge. Kept panels cost nothing.
function quoteText(quote) {
  const kept = quote.kept.length;
  if (quote.render.length === 0) {
    return ngettext(
      "Every panel is drawn and kept — nothing to pay. %(count)s panel kept.",
      "Every panel is drawn and kept — nothing to pay. %(count)s panels kept.",
      kept,
    );
  }
  const parts = [ngettext("%(count)s panel to draw", "%(count)s panels to draw", quote.render.length)];
  if (kept) parts.push(gettext(", %(count)s kept", { count: kept }));
  parts.push(ngettext(" — %(count)s credit", " — %(count)s credits", quote.credits));
  const sheets = quote.sheets ? quote.sheets.length : 0;
  if (sheets === quote.render.length && sheets) parts.push(gettext(". All redrawn for a new character sheet."));
  else if (sheets) parts.push(gettext(". %(count)s redrawn for a new character sheet.", { count: sheets }));
  return parts.join("");
}
// Not awaited: Generate is wired below without waiting for it (a click is never lost).
async function showQuote() {
  const quote = await api("GET", `/api/storyboards/${id}/quote/`);
  const quoteLine = document.getElementById("quote");
  quoteLine.dataset.credits = quote.credits;
  quoteLine.textContent = quoteText(quote);
  for (const tag of grid.querySelectorAll(".tag.kept")) tag.remove();
  for (const index of quote.kept) {
    grid.querySelector(`[data-index="${index}"] header`)?.append(el("span", "tag kept", gettext("Kept")));
  }
  document.getElementById("read-kept").hidden = quote.kept.length === 0;
}
showQuote().catch(() => {
  // No quote shown; Generate still answers with what it does.
});

// --- Speculation: start panel one while the person reads this screen. -------------------
// Once the screen is visible and settled for the debounce, ask; show the hint only
// when a hold was placed, keep it true while shown, and cancel on leaving.
const debounceMs = Number(document.getElementById("review-script").dataset.debounceMs || 1500);
const hint = document.getElementById("speculation-hint");
let speculativeJob = null;
// This visit's own name for its speculation, sent with the ask and with the beacon,
// so leaving while the ask is still in flight cancels what the server is creating.
let speculationToken = null;
let generating = false;
let settleTimer = null;
let recheckTimer = null;

// While panel one is prepared, its credit is held, not spent: the header's badge and a line
// below Generate say so, and the badge comes back when the hold is released.
const badge = document.getElementById("nav-balance");
const badgeTitle = badge?.title;
const heldWords = gettext("1 credit held for panel one — given back if you leave");

function hideHint() {
  hint.hidden = true;
  clearInterval(recheckTimer);
  if (badge) badge.title = badgeTitle;
  showBalance();
}

function showBalance() {
  return refreshNavCredits(); // unreadable: the balance shown stays as it was
}

async function speculate() {
  if (document.visibilityState !== "visible" || generating || !storyboard.complete) return;
  try {
    speculationToken = crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`.replace(".", "");
    const answer = await api("POST", `/api/storyboards/${id}/speculate/`, { token: speculationToken });
    // What the server answered, for the page's own state (never shown): "hint" or the reason.
    hint.dataset.answer = answer.hint ? "hint" : answer.reason || "declined";
    if (!answer.hint || generating) return;
    speculativeJob = answer.job;
    document.getElementById("speculation-held").textContent = heldWords;
    if (badge) badge.title = heldWords;
    hint.hidden = false;
    clearInterval(recheckTimer); // two asks in flight at once keep one timer
    recheckTimer = setInterval(recheck, 3000);
    showBalance();
  } catch (err) {
    // Ineligible or failed: the person sees nothing here and meets any prompt at Generate.
    hint.dataset.answer = "error";
  }
}

async function recheck() {
  try {
    const job = await api("GET", `/api/jobs/${speculativeJob}/`);
    if (!LIVE.includes(job.state)) return hideHint();
    // Drawn and waiting for the click: say so (the image itself comes with Generate).
    const current = job.panels.find((panel) => panel.index === job.current_index);
    if (current && current.state === "ready") showReady(current.index);
  } catch (err) {
    hideHint();
  }
}

function showReady(index) {
  hint.dataset.ready = "true";
  hint.querySelector(".spinner").hidden = true;
  document.getElementById("speculation-hint-text").textContent =
    index === 1
      ? gettext("Your first panel is ready — Generate shows it at once.")
      : gettext("Panel %(index)s is ready — Generate shows it at once.", { index });
}

// --- Rough pages: the whole comic drafted and lettered, free, while the person reads. ----
// Asked for when the screen settles, before speculation, so that panel one's final can be
// drawn from its rough (the worker waits a moment for it: ROUGH_WAIT_SECONDS).
const rough = roughPages(document.getElementById("rough-pages"), {
  id,
  shots: serverData("shot-names", []),
  templates: serverData("template-names", []),
});
let roughsAsked = null;
function askForRoughs() {
  if (!roughsAsked && storyboard.complete) {
    roughsAsked = rough.ask().catch(() => false); // failed: Review as it was
    roughsAsked.then((offered) => offered && rough.show()).catch(() => {});
  }
  return roughsAsked || Promise.resolve(false);
}
// A panel's picture changed on the rough pages: the quote may have changed with it, and a
// speculation of the older version is replaced by the next settle.
// The panels' text below the pages is read again too.
document.addEventListener("rough-pages:changed", async () => {
  const fresh = await api("GET", `/api/storyboards/${id}/`).catch(() => null);
  if (fresh) grid.replaceChildren(...fresh.panels.map((p) => panelView(p, shots)));
  showQuote().catch(() => {});
});

function settle() {
  clearTimeout(settleTimer);
  if (document.visibilityState !== "visible") return;
  settleTimer = setTimeout(async () => {
    await askForRoughs();
    if (!speculativeJob) speculate();
  }, debounceMs);
}

// Leaving Review ends what it prepared: its hold is released. Sent as beacons when the
// page goes away (a closed tab); `wait` (a link followed on this page) sends them as
// requests and resolves once they were answered (or after two seconds), so that the next
// page is served with the credit given back.
function abandon(wait = false) {
  clearTimeout(settleTimer);
  if (generating) return Promise.resolve();
  const sent = [];
  const send = (url, fields) => {
    const form = new FormData();
    form.append("csrfmiddlewaretoken", csrfToken());
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (!wait) {
      navigator.sendBeacon(url, form);
      return;
    }
    const request = fetch(url, { method: "POST", body: form, credentials: "same-origin", keepalive: true });
    sent.push(request.catch(() => null));
  };
  if (speculationToken) {
    send(`/api/storyboards/${id}/speculate/leave/`, { token: speculationToken });
    speculationToken = null;
  }
  if (speculativeJob) {
    send(`/api/jobs/${speculativeJob}/cancel/?if_unconfirmed=1`, {});
    speculativeJob = null;
    hint.hidden = true;
    clearInterval(recheckTimer);
  }
  const timeout = new Promise((done) => setTimeout(done, 2000));
  return Promise.race([Promise.all(sent), timeout]);
}

// A link followed from Review (Back, a step, the header's): what was prepared is ended
// first, then the link is followed.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || link.target) return;
  if (link.origin !== location.origin || link.hash || (!speculativeJob && !speculationToken)) return;
  event.preventDefault();
  abandon(true).then(() => {
    location.href = link.href;
  });
});
document.addEventListener("visibilitychange", settle);
window.addEventListener("pagehide", () => abandon());
settle();

// Panel one was drawn before the click (Generate attached to the speculation):
// Review turns into it with the next paint, then the job page opens, carrying the
// same panel. Resolves once a frame with the image has been painted, or after a
// second whatever happens (the job page shows it anyway).
function showPanelOne(panel) {
  const figure = document.createElement("figure");
  figure.className = "job-panel current";
  const frame = document.createElement("div");
  frame.className = "frame";
  const img = document.createElement("img");
  img.alt = gettext("Panel %(index)s", { index: 1 });
  img.setAttribute("elementtiming", "panel-1");
  img.src = panel.image_url;
  frame.append(img);
  const caption = document.createElement("figcaption");
  caption.textContent = gettext("Panel 1 · Ready for you — opening your comic…");
  figure.append(frame, caption);
  const grid = document.getElementById("review-panels");
  grid.className = "job-panels";
  grid.replaceChildren(figure);
  document.getElementById("review-summary").textContent = gettext("Your comic is starting.");
  // Not hideHint(): its balance read would be served beside panel one's image, and the job
  // page opening next shows the balance anyway (the recheck stopped at the click).
  hint.hidden = true;
  const painted = img
    .decode()
    .catch(() => {})
    .then(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  return Promise.race([painted, new Promise((done) => setTimeout(done, 1000))]);
}

generate.addEventListener("click", async () => {
  generating = true;
  clearTimeout(settleTimer);
  clearInterval(recheckTimer); // nothing else asks the server while Generate is answered
  generate.disabled = true;
  generate.textContent = gettext("Starting…");
  try {
    const started = await api("POST", `/api/storyboards/${id}/generate/`, {});
    const first = (started.delivered || []).find((panel) => panel.index === 1);
    if (first) await showPanelOne(first);
    location.href = `/comics/${id}/jobs/${started.job}/`;
  } catch (err) {
    generating = false;
    generate.disabled = false;
    generate.textContent = gettext("Generate");
    if (!showOutOfCredits(err, prompt)) {
      const box = document.getElementById("form-error");
      box.textContent = err.message;
      box.hidden = false;
    }
  }
});
