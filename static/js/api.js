// The public API from the browser: JSON, session cookie, CSRF header.
import { formatNumber, gettext } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.detail) || gettext("The server answered %(status)s.", { status }));
    this.status = status;
    this.body = body || {};
  }
}

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

// `body` is sent as JSON, or as multipart form data when it is a FormData (an upload).
export async function api(method, url, body) {
  const options = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (method !== "GET") options.headers["X-CSRFToken"] = csrfToken();
  if (body instanceof FormData) {
    options.body = body; // the browser writes the multipart Content-Type and its boundary
  } else if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    throw new ApiError(0, { error: "network", detail: gettext("Could not reach the server. Check your connection and try again.") });
  }
  const data = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// The person's credits, wherever the page shows them: every element marked
// data-credits="available" or "held" (the header's badge, a page's own card), and those
// marked data-credits-if-held, shown only while something is held. Each reading carries
// `as_of` (the length of the account's journal when it was read: the server's figures at
// the page's paint, a `credits` event, GET /api/me/); one older than the reading shown is
// dropped, so a replayed event or a late answer never puts back an older balance.
let creditsAsOf = Number(document.getElementById("nav-balance")?.dataset.asOf ?? -1);

export function showCredits({ available, held, as_of: asOf }) {
  if (typeof asOf !== "number" || asOf < creditsAsOf) return false;
  creditsAsOf = asOf;
  document.querySelectorAll('[data-credits="available"]').forEach((node) => (node.textContent = formatNumber(available)));
  document.querySelectorAll('[data-credits="held"]').forEach((node) => (node.textContent = formatNumber(held)));
  document.querySelectorAll("[data-credits-if-held]").forEach((node) => (node.hidden = !held));
  return true;
}

// Reads the person's balance and shows it everywhere (showCredits). Resolves to
// /api/me/'s answer, or null when it could not be read (the figures shown stay as they were).
export async function refreshNavCredits() {
  const me = await api("GET", "/api/me/").catch(() => null);
  if (me) showCredits({ ...me.credits, as_of: me.credits_as_of });
  return me;
}

// A 402 (out of credits) shown in `box` with a link to the server's purchase_url; returns
// false, touching nothing, for any other error. A box that already holds its own words and a
// link marked data-purchase-link (Review's prompt) gets the link's address and is shown;
// otherwise the box is filled with `before`, a link reading `link`, and `after`.
export function showOutOfCredits(err, box, { before = "", link = gettext("Get more credits"), after = "" } = {}) {
  if (!(err instanceof ApiError) || err.status !== 402) return false;
  const url = err.body.purchase_url;
  const own = box.querySelector("[data-purchase-link]");
  if (own) {
    own.href = url;
  } else {
    const anchor = Object.assign(document.createElement("a"), { href: url, textContent: link });
    box.replaceChildren(...[before, anchor, after].filter((part) => part !== ""));
  }
  box.hidden = false;
  return true;
}

// Data the server hands a script with Django's json_script (`<script type="application/json" id=…>`).
export function serverData(id, fallback = null) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : fallback;
}

// Buttons that need a script start disabled (data-needs-script) and are enabled once it
// has wired them, so a click made while the page is still loading is never lost.
export function scriptReady(root = document) {
  root.querySelectorAll("[data-needs-script]").forEach((control) => {
    control.disabled = false;
  });
}

export function wizard() {
  const root = document.getElementById("wizard");
  return { root, id: root.dataset.storyboard, step: root.dataset.step };
}

// {"panels": {"0": {"dialogue": {"1": {"text": ["Too long"]}}}}} -> {"panels.0.dialogue.1.text": "Too long"}
export function flattenErrors(fields, prefix = "", out = {}) {
  if (Array.isArray(fields)) {
    if (fields.every((f) => typeof f === "string")) out[prefix] = fields.join(" ");
    else fields.forEach((f, i) => flattenErrors(f, prefix ? `${prefix}.${i}` : `${i}`, out));
  } else if (fields && typeof fields === "object") {
    for (const [key, value] of Object.entries(fields)) {
      flattenErrors(value, key === "non_field_errors" ? prefix : prefix ? `${prefix}.${key}` : key, out);
    }
  } else if (fields !== undefined && fields !== null) {
    out[prefix] = String(fields);
  }
  return out;
}

// The field an error slot speaks of: the one its data-error-field names (a selector within
// the slot's parent), else the control just before it, or the one in the label just before it.
// None for an error about a whole list (its slot follows no control).
function fieldOf(slot) {
  if (slot.dataset.errorField) return slot.parentElement.querySelector(slot.dataset.errorField);
  const before = slot.previousElementSibling;
  if (!before) return null;
  if (before.matches("input, select, textarea")) return before;
  return before.matches("label") ? before.querySelector("input, select, textarea") : null;
}

let errorIds = 0;

// A shown error is tied to its field (aria-invalid, and aria-describedby naming the error,
// after whatever else describes the field); a cleared one is untied.
function tieError(slot, shown) {
  const field = fieldOf(slot);
  if (!field) return;
  if (!slot.id) slot.id = `field-error-${++errorIds}`;
  const refs = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter((ref) => ref && ref !== slot.id);
  if (shown) {
    field.setAttribute("aria-invalid", "true");
    refs.push(slot.id);
  } else {
    field.removeAttribute("aria-invalid");
  }
  if (refs.length) field.setAttribute("aria-describedby", refs.join(" "));
  else field.removeAttribute("aria-describedby");
}

export function clearErrors(root = document) {
  root.querySelectorAll("[data-error-for]").forEach((slot) => {
    slot.textContent = "";
    tieError(slot, false);
  });
  const banner = document.getElementById("form-error");
  if (banner) banner.hidden = true;
}

// Shows each error next to the field it concerns; the rest in the banner.
export function showErrors(error, root = document) {
  clearErrors(root);
  const flat = flattenErrors(error.body && error.body.fields);
  const unplaced = [];
  for (const [path, message] of Object.entries(flat)) {
    const slot = root.querySelector(`[data-error-for="${CSS.escape(path)}"]`);
    if (slot) {
      slot.textContent = message;
      tieError(slot, true);
    } else {
      unplaced.push(message);
    }
  }
  if (!Object.keys(flat).length) unplaced.push(error.message);
  const banner = document.getElementById("form-error");
  if (banner && unplaced.length) {
    banner.textContent = unplaced.join(" ");
    banner.hidden = false;
  }
  const first = root.querySelector("[data-error-for]:not(:empty)");
  if (first) first.scrollIntoView({ block: "center", behavior: "smooth" });
}

// Debounced autosave with a visible state: "Saving…", "Saved", "Not saved".
export function autosaver(save, delay = 700) {
  const state = document.getElementById("save-state");
  let timer = null;
  let running = Promise.resolve(true);
  const run = () => {
    timer = null;
    if (state) state.textContent = gettext("Saving…");
    running = running.then(() =>
      save().then(
        () => {
          if (state) state.textContent = gettext("Saved");
          clearErrors();
          return true;
        },
        (err) => {
          if (state) state.textContent = gettext("Not saved");
          showErrors(err);
          return false;
        },
      ),
    );
    return running;
  };
  const saver = {
    schedule() {
      if (state) state.textContent = gettext("Unsaved changes");
      clearTimeout(timer);
      timer = setTimeout(run, delay);
    },
    async now() {
      clearTimeout(timer);
      return run();
    },
    // What was typed, saved (or refused): sends nothing when nothing waits.
    async settle() {
      if (timer === null) return running;
      clearTimeout(timer);
      return run();
    },
  };
  // The step links leave the page: what was typed is saved first, and a save
  // that fails keeps the person here with its error shown.
  document.querySelectorAll("nav.steps a").forEach((link) =>
    link.addEventListener("click", async (event) => {
      event.preventDefault();
      if (await saver.settle()) location.href = link.href;
    }),
  );
  return saver;
}
