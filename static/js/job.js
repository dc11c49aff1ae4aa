// The job page: panels as they arrive, decisions, live credits; reconnects by itself.
// Every claim on screen is re-derived from the job the server returns.
import { api, csrfToken, refreshNavCredits, serverData, showCredits, showOutOfCredits } from "./api.js";
import { formatNumber, gettext, ngettext, pgettext } from "./i18n.js";
import { price } from "./prices.js";

const root = document.getElementById("job");
const jobId = root.dataset.job;
const grid = document.getElementById("job-panels");
const template = document.getElementById("job-panel");
const progress = document.getElementById("progress");
const statusLine = document.getElementById("status-line");
const statusText = document.getElementById("status-text");
const errorBox = document.getElementById("job-error");
const connection = document.getElementById("connection");
// The job states in which work is still under way, from the server's enum (LIVE_STATES).
const LIVE = serverData("live-job-states");
let job = null;
let lastSeq = 0;
let socket = null;
let retryDelay = 500;
let busy = null; // {kind: "warming"|"drawing"|"queued"|"provider-queued"|"starting"|"unreachable"|"retrying", index, since, detail}
let refreshTimer = null;
// While the job is live and the page in sight, a ping a minute: the stream
// stays open while the person watches (the server closes one idle for
// WS_IDLE_SECONDS), and the server answers after any event it had dropped.
const PING_EVERY_MS = 60_000;
const tiles = new Map(); // index -> {node, signature}
// A tile given the focus after a decision while no next decision was offered yet: the
// next Approve (or Try again) takes the focus from it once it appears.
let focusWaits = null;

const STATE_WORDS = {
  pending: pgettext("a panel's state", "Waiting"),
  rendering: pgettext("a panel's state", "Drawing…"),
  ready: pgettext("a panel's state", "Drawn"),
  delivered: pgettext("a panel's state", "Ready for you"),
  approved: pgettext("a panel's state", "Approved"),
  failed: pgettext("a panel's state", "Failed"),
};

function tile(panel) {
  const node = template.content.firstElementChild.cloneNode(true);
  node.dataset.index = panel.index;
  node.dataset.state = panel.state;
  node.dataset.attempts = panel.attempts;
  let img = node.querySelector("img");
  const placeholder = node.querySelector(".placeholder");
  // The server's first paint already shows this image: keep that very element (no reload, no flash).
  const painted = grid.querySelector(`figure[data-server-rendered][data-index="${panel.index}"] img`);
  if (panel.image_url && painted && painted.getAttribute("src") === panel.image_url) {
    img.replaceWith(painted);
    img = painted;
  }
  if (panel.image_url) {
    if (img !== painted) img.setAttribute("elementtiming", `panel-${panel.index}`); // paint timing
    img.src = panel.image_url;
    img.alt = gettext("Panel %(index)s: %(description)s", panel);
    img.hidden = false;
    placeholder.hidden = true;
  } else {
    placeholder.textContent = panel.state === "failed" ? panel.error || gettext("This render failed.") : panel.description;
  }
  node.querySelector(".label").textContent = gettext("Panel %(index)s · %(state)s", {
    index: panel.index,
    state: STATE_WORDS[panel.state] || panel.state,
  });
  showCheck(node.querySelector(".check"), panel.check);
  const deciding = job.state === "awaiting_decision" && panel.index === job.current_index;
  if (deciding && (panel.state === "delivered" || panel.state === "failed")) {
    const decision = node.querySelector(".decision");
    decision.hidden = false;
    const approve = decision.querySelector(".approve");
    const redo = decision.querySelector(".redo");
    if (panel.state === "failed") {
      approve.hidden = true;
      redo.textContent = ngettext("Try again (%(count)s credit)", "Try again (%(count)s credits)", price("redo"));
    }
    approve.addEventListener("click", () => decide("approve", panel.index, approve));
    redo.addEventListener("click", () => decide("redo", panel.index, redo));
    node.classList.add("current");
  }
  return node;
}

// What the judge said of the render shown ("Checked before shown"), and a flag when it
// is shown scored low after its redraws.
function showCheck(line, check) {
  if (!check) return;
  const names = check.sheets || [];
  const against =
    names.length === 0
      ? gettext("Checked against the panel's description")
      : names.length === 1
        ? gettext("Checked against %(name)s's sheet", { name: names[0] })
        : gettext("Checked against the sheets of %(names)s", { names: names.join(", ") });
  const parts = [against, gettext("score %(score)s", { score: formatNumber(Math.round(check.score * 100) / 100) })];
  if (check.redraws) {
    parts.push(
      ngettext("drawn again once, free", "drawn again %(count)s times, free", check.redraws, { count: check.redraws }),
    );
  }
  line.querySelector(".check-text").textContent = parts.join(" · ");
  line.title = check.reason || "";
  const flag = line.querySelector(".check-flag");
  flag.hidden = !check.low;
  flag.textContent = gettext("Scored low: look closely before approving");
  line.classList.toggle("low", Boolean(check.low));
  line.hidden = false;
}

function render() {
  const focused = grid.contains(document.activeElement) ? document.activeElement : null;
  const total = job.panels.length;
  const approved = job.panels.filter((p) => p.state === "approved").length;
  // Tiles are rebuilt only when their own panel changed, so a click on a
  // button is never lost to a refresh caused by another panel's events.
  const wanted = job.panels.map((panel) => {
    const deciding = job.state === "awaiting_decision" && panel.index === job.current_index;
    const signature = JSON.stringify([panel.state, panel.image_url, panel.attempts, panel.error, panel.check, deciding]);
    const old = tiles.get(panel.index);
    if (old && old.signature === signature) return old.node;
    const node = tile(panel);
    tiles.set(panel.index, { node, signature });
    return node;
  });
  for (const index of [...tiles.keys()]) {
    if (!job.panels.some((p) => p.index === index)) tiles.delete(index);
  }
  wanted.forEach((node, i) => {
    if (grid.children[i] !== node) grid.insertBefore(node, grid.children[i] || null);
  });
  while (grid.children.length > wanted.length) grid.lastElementChild.remove();
  const at = { index: job.current_index, total };
  const words = {
    queued: gettext("Panel %(index)s of %(total)s is queued", at),
    rendering: gettext("Drawing panel %(index)s of %(total)s", at),
    awaiting_decision: gettext("Panel %(index)s of %(total)s: approve it or redo it", at),
    completed: ngettext("All %(count)s panel approved", "All %(count)s panels approved", total),
    cancelled: gettext("Stopped. Held credits were released."),
    expired: gettext("This job ran out of time. Held credits were released."),
    failed: gettext("This job failed. Held credits were released."),
  };
  // Finished, the state says it all ("All 4 panels approved"): the count is not said twice.
  progress.textContent =
    job.state === "completed"
      ? words.completed
      : gettext("%(state)s · %(approved)s of %(total)s approved", {
          state: words[job.state] || job.state,
          approved,
          total,
        });
  const live = LIVE.includes(job.state);
  document.getElementById("cancel-job").hidden = !live;
  if (!["queued", "rendering"].includes(job.state)) busy = null;
  document.getElementById("done").hidden = job.state !== "completed";
  if (job.state === "completed") {
    document.getElementById("read-link").href = root.dataset.readUrl;
  }
  tick();
  // A rebuilt tile took the focused button with it: the focus goes where the person will act next.
  if (focused && !focused.isConnected) keepFocus(focused.closest(".job-panel"));
  else if (focusWaits && [focusWaits, document.body].includes(document.activeElement)) keepFocus(focusWaits);
}

// The button of the decision now asked for (Approve, else Try again), if one is shown.
function decisionButton() {
  const decision = grid.querySelector(".job-panel.current .decision:not([hidden])");
  return decision && (decision.querySelector("button.approve:not([hidden])") || decision.querySelector("button.redo"));
}

// After a decision (or a refresh that rebuilt the focused tile), never the body: the next
// decision's button; "Read it" once the comic is finished; else the tile of the panel decided on.
function keepFocus(decided) {
  const next = decisionButton() || (job.state === "completed" ? document.getElementById("read-link") : null);
  focusWaits = null;
  if (next) {
    next.focus();
    return;
  }
  const node = decided && tiles.get(Number(decided.dataset.index))?.node;
  if (!node) return;
  node.tabIndex = -1;
  node.focus();
  focusWaits = node;
}

function tick() {
  if (!busy) {
    statusLine.hidden = true;
    return;
  }
  const at = { index: busy.index, seconds: Math.floor((Date.now() - busy.since) / 1000) };
  const words = {
    warming: () =>
      gettext("Warming up the GPU for panel %(index)s… %(seconds)ss (the first render after a quiet spell takes longer)", at),
    drawing: () => gettext("Drawing panel %(index)s… %(seconds)ss", at),
    queued: () => gettext("Panel %(index)s is waiting for a free GPU… %(seconds)ss", at),
    "provider-queued": () => gettext("Panel %(index)s is queued at the image provider… %(seconds)ss", at),
    starting: () => gettext("Panel %(index)s is waiting for the image provider… %(seconds)ss", at),
    // The server's words (not answering, or asking us to slow down), with when it tries again.
    unreachable: () =>
      gettext("Panel %(index)s: %(detail)s (%(seconds)ss)", {
        ...at,
        detail: busy.detail || gettext("the image provider is not answering."),
      }),
    retrying: () =>
      gettext("Panel %(index)s: the render failed and is being tried again (nothing is charged twice)… %(seconds)ss", at),
  };
  statusText.textContent = words[busy.kind]();
  statusLine.hidden = false;
}
setInterval(tick, 1000);

// Answers may arrive out of order: a body older than the one shown is dropped.
function show(fresh) {
  if (job && fresh.last_seq < job.last_seq) return;
  job = fresh;
  render();
}

async function refresh() {
  try {
    show(await api("GET", `/api/jobs/${jobId}/`));
  } catch (err) {
    showError(err);
  }
}

function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 80);
}

function showError(err) {
  errorBox.hidden = false;
  const words = {
    before: gettext("You are out of credits. "),
    link: gettext("Get more credits"),
    after: gettext(" and try again."),
  };
  if (!showOutOfCredits(err, errorBox, words)) errorBox.textContent = err.message;
}

async function decide(kind, index, button) {
  button.disabled = true;
  errorBox.hidden = true;
  try {
    show(await api("POST", `/api/jobs/${jobId}/panels/${index}/${kind}/`));
    // A disabled button may have dropped the focus before the answer came.
    if (document.activeElement === document.body) keepFocus(tiles.get(index)?.node);
  } catch (err) {
    showError(err);
    button.disabled = false;
    button.focus();
  }
}

function onEvent(event) {
  if (event.type === "pong") return; // the events before it were sent first
  if (event.seq <= lastSeq) return; // seen already
  if (event.seq > lastSeq + 1) {
    // A gap: the server fills it on reconnect.
    socket.close();
    return;
  }
  lastSeq = event.seq;
  const data = event.data || {};
  const since = Date.parse(event.at) || Date.now();
  const ahead = job && data.index !== undefined && data.index !== job.current_index;
  if (ahead && event.type.startsWith("panel.") && !["panel.delivered", "panel.approved"].includes(event.type)) {
    refreshSoon(); // a look-ahead render: no status line for it
    return;
  }
  if (event.type === "panel.queued") busy = { kind: "queued", index: data.index, since };
  if (event.type === "panel.rendering") busy = { kind: data.warming ? "warming" : "drawing", index: data.index, since };
  if (event.type === "panel.provider") {
    // Where the render stands at a remote provider: the page says so, never a bare "Drawing…".
    const kinds = { queued: "provider-queued", starting: "starting", booting: "warming", rendering: "drawing", unreachable: "unreachable" };
    busy = { kind: kinds[data.state] || "drawing", index: data.index, since, detail: data.detail };
  }
  if (event.type === "panel.retrying") busy = { kind: "retrying", index: data.index, since };
  if (["panel.ready", "panel.delivered", "panel.failed"].includes(event.type)) busy = null;
  // The account's figures as of the event: shown unless the page has a newer reading (a
  // replayed event is older than the figures the page was served with).
  if (event.type === "credits") showCredits(data);
  refreshSoon();
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  // batch=1: what was missed comes as {"type": "events", "events": [...]} (a few frames
  // for a long job's log); live events come one by one either way.
  socket = new WebSocket(`${scheme}://${location.host}/ws/jobs/${jobId}/?after=${lastSeq}&batch=1`);
  socket.addEventListener("open", () => {
    retryDelay = 500;
    connection.textContent = "";
    refreshSoon(); // whatever happened while away
  });
  socket.addEventListener("message", (message) => {
    const content = JSON.parse(message.data);
    if (content.type === "events") {
      for (const event of content.events) {
        onEvent(event);
        if (socket.readyState !== WebSocket.OPEN) break; // a gap closed it: it refills on reconnect
      }
    } else onEvent(content);
  });
  const ping = setInterval(() => {
    const watching = job && LIVE.includes(job.state) && document.visibilityState === "visible";
    if (watching && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "ping" }));
  }, PING_EVERY_MS);
  socket.addEventListener("close", () => clearInterval(ping));
  socket.addEventListener("close", (event) => {
    if (event.code === 4403) {
      connection.textContent = gettext("This job is not yours.");
      return;
    }
    if (event.code === 4429) {
      connection.textContent = gettext("Too many Mangagen tabs are open; close one and reload this page.");
      return;
    }
    if (event.code === 4408) {
      // Closed while idle: reconnect (and catch up) when the person is back.
      connection.textContent = gettext("Paused while idle.");
      const back = () => {
        if (document.visibilityState !== "visible") return;
        ["focus", "pointerdown", "keydown"].forEach((e) => window.removeEventListener(e, back));
        document.removeEventListener("visibilitychange", back);
        connect();
      };
      ["focus", "pointerdown", "keydown"].forEach((e) => window.addEventListener(e, back));
      document.addEventListener("visibilitychange", back);
      return;
    }
    if (job && !LIVE.includes(job.state) && event.wasClean) return;
    connection.textContent = gettext("Reconnecting…");
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 8000);
  });
}

document.getElementById("cancel-job").addEventListener("click", async () => {
  if (!confirm(gettext("Stop rendering? Credits held for renders you have not seen are released."))) return;
  try {
    show(await api("POST", `/api/jobs/${jobId}/cancel/`));
    await refreshNavCredits();
  } catch (err) {
    showError(err);
  }
});

// The job came with the page (server-rendered, panels already painted); the socket adds what follows.
job = serverData("job-data") || (await api("GET", `/api/jobs/${jobId}/`));
render();
connect(); // from seq 0: the log tells what is under way (a warming GPU) and since when
// A handle for the browser tests (they drop the socket); the page carries data-test-hook only with DEBUG.
if ("testHook" in root.dataset) {
  window.mangagenJob = { get lastSeq() { return lastSeq; }, get socket() { return socket; }, csrfToken };
}
