// The phoned live monitor: reads the control plane's /v1 endpoints with a reader token.
//
// Every text from the server is put in the page as a text node or textContent (never parsed
// as markup), so a hostile SMS body or task id renders as text. The token lives in
// sessionStorage only and is sent only in the Authorization header of same-origin requests;
// it is never shown or logged. It is typed into the form or handed over in the address
// (/monitor#token=...), which is read once and taken out of the address bar at once.
// Screenshots are fetched with the token as blobs and shown through blob: URLs; a click
// on one shows it large in a modal <dialog> (a click or Escape closes it).
// Pending approvals are asked for by state (/v1/tasks?state=approval), never picked out of a
// limited list; a token that may decide (approver) gets Approve / Deny buttons whose request
// quotes the revision and preview digest shown on the card. A card says when its preview is a
// fresh one that replaced a void approval, or when the daemon saw the phone change since it
// was shown (stale); a stale card whose approval can only fail offers Deny alone. Each
// decision made here is kept in this tab ("Decided in this tab": its outcome, or the server's
// refusal, and the task's state at every refresh) until dismissed or signed out.
"use strict";

const TOKEN_KEY = "phoned.monitor.token";
const WAIT_S = 25; // long-poll on /v1/events
const APPROVAL_WAIT_S = 3; // the long-poll while approvals are pending: their stale marks are
// evidence the daemon adds without an event, so the cards are read again this often
const RETRY_MS = 2000; // after a failed request
const ARTIFACT_PATH = /^\/v1\/tasks\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/artifacts\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})$/;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const LIST_LIMIT = 1000; // tasks in the table: the newest ones
const DECISIONS_KEPT = 10; // decisions of this tab listed under the approvals
const STATE_ORDER = ["queued", "dispatched", "running", "waiting", "approval", "permission",
  "completed", "failed", "stopped"];

const monitor = {
  session: 0, // bumped at sign-in and sign-out: stale loops and answers stop
  cursor: 0,
  refreshing: null,
  again: false,
  blobs: new Map(), // artifact path -> blob: URL (or null when not an image)
  rendered: 0, // how many refreshes have completed (tests and humans can watch it)
  approvals: 0, // pending approvals the last refresh showed
  decisions: new Map(), // task id -> the last decision made in this tab (oldest first)
};

// ---- DOM helpers --------------------------------------------------------------------

/** An element with attributes (set as properties or data-*) and children (text is text). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key.startsWith("data-")) node.setAttribute(key, String(value));
    else if (key === "class") node.className = String(value);
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function $(id) {
  return document.getElementById(id);
}

function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function when(seconds) {
  if (typeof seconds !== "number") return "";
  return new Date(seconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function setStatus(message, kind) {
  const node = $("status");
  node.textContent = message;
  node.dataset.kind = kind || "ok";
}

// ---- the API ------------------------------------------------------------------------

class AuthError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** GET a same-origin /v1 path with the token; JSON (or a Response with raw=true). */
async function api(path, raw) {
  const answer = await fetch(path, {
    headers: { Authorization: "Bearer " + token() },
    cache: "no-store",
    credentials: "omit",
    referrerPolicy: "no-referrer",
  });
  if (answer.status === 401 || answer.status === 403) {
    throw new AuthError(answer.status === 401 ? "the token was refused" : "this token may not read",
      answer.status);
  }
  if (!answer.ok) throw new Error(`${path}: HTTP ${answer.status}`);
  return raw ? answer : answer.json();
}

/** POST a JSON body to a same-origin /v1 path; {ok, status, body} (a refusal is not thrown). */
async function post(path, body) {
  const answer = await fetch(path, {
    method: "POST",
    headers: { Authorization: "Bearer " + token(), "Content-Type": "application/json" },
    body: JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
    referrerPolicy: "no-referrer",
  });
  let doc = null;
  try {
    doc = await answer.json();
  } catch (error) {
    doc = null;
  }
  return { ok: answer.ok, status: answer.status, body: doc };
}

// ---- tables -------------------------------------------------------------------------

function renderByState(queue) {
  const rows = STATE_ORDER.filter((s) => s in queue).concat(
    Object.keys(queue).filter((s) => !STATE_ORDER.includes(s)));
  $("by-state").tBodies[0].replaceChildren(...rows.map((state) =>
    el("tr", { "data-state": state }, el("td", {}, state), el("td", { class: "num" }, queue[state]))));
}

function renderByDevice(tasks) {
  const counts = new Map();
  for (const task of tasks) {
    const device = task.device || "(any)";
    if (!counts.has(device)) counts.set(device, {});
    const row = counts.get(device);
    row[task.state] = (row[task.state] || 0) + 1;
  }
  const states = STATE_ORDER.filter((s) => [...counts.values()].some((row) => row[s]));
  const table = $("by-device");
  table.tHead.replaceChildren(el("tr", {}, el("th", {}, "device"), states.map((s) => el("th", {}, s)),
    el("th", {}, "total")));
  table.tBodies[0].replaceChildren(...[...counts.entries()].sort().map(([device, row]) =>
    el("tr", { "data-device": device }, el("td", {}, device),
      states.map((s) => el("td", { class: "num", "data-state": s }, row[s] || 0)),
      el("td", { class: "num total" }, Object.values(row).reduce((a, b) => a + b, 0)))));
}

function renderTasks(tasks) {
  const selected = selectedTask();
  const rows = tasks.map((task) => { // newest first, as the API listed them
    const link = el("a", { href: "#task=" + encodeURIComponent(task.id) }, task.id);
    return el("tr", { "data-task-id": task.id, class: task.id === selected ? "selected" : "" },
      el("td", {}, link), el("td", {}, task.method), el("td", {}, task.device || ""),
      el("td", {}, task.conversation_id), el("td", { class: "state " + task.state }, task.state),
      el("td", { class: "num" }, `${task.attempt}/${task.max_attempts}`),
      el("td", {}, when(task.updated_at)));
  });
  $("task-table").tBodies[0].replaceChildren(...rows);
  $("task-count").textContent = tasks.length >= LIST_LIMIT
    ? `the newest ${LIST_LIMIT}; older tasks are not listed` : `${tasks.length} tasks`;
}

// ---- workflows ----------------------------------------------------------------------

async function renderWorkflows(tasks) {
  const ids = [...new Set(tasks.map((t) => t.workflow_id).filter(Boolean))];
  const flows = await Promise.all(ids.map((id) => api("/v1/workflows/" + encodeURIComponent(id))));
  $("no-workflows").hidden = flows.length > 0;
  $("workflow-list").replaceChildren(...flows.map(workflowCard));
}

function workflowCard(flow) {
  const record = flow.workflow;
  const steps = [...flow.tasks].sort((a, b) => (a.step_index ?? 0) - (b.step_index ?? 0));
  return el("div", { class: "card workflow", "data-workflow-id": record.id },
    el("h3", {}, record.name || record.id, " ", el("span", { class: "state " + record.state }, record.state)),
    el("p", { class: "muted" }, `${record.id} on ${record.device || "(any)"} · conversation ${record.conversation_id}`,
      record.halted_reason ? ` · halted: ${record.halted_reason}` : ""),
    el("ol", { class: "steps" }, steps.map((step) =>
      el("li", { "data-step-id": step.step_id || "", "data-task-id": step.id },
        el("a", { href: "#task=" + encodeURIComponent(step.id) }, step.step_id || step.method), " ",
        el("span", { class: "method" }, step.method), " ",
        el("span", { class: "state " + step.state }, step.state)))));
}

// ---- schedules ----------------------------------------------------------------------

async function renderSchedules() {
  const list = await api("/v1/schedules");
  $("no-schedules").hidden = list.schedules.length > 0;
  $("schedule-list").replaceChildren(...list.schedules.map(scheduleCard));
}

/** One schedule: cron and zone, the task it creates, next due, last run and its result. */
function scheduleCard(s) {
  const run = s.last_run;
  let last = "never ran";
  if (run) {
    const result = run.result === "fired" ? (run.task_state || "removed") : run.result;
    last = el("span", {}, `last run ${when(run.due_at)} `,
      el("span", { class: "state " + result, "data-result": result }, result),
      run.task_id ? [" ", el("a", { href: "#task=" + encodeURIComponent(run.task_id) }, run.task_id)] : "");
  }
  return el("div", { class: "card schedule", "data-schedule-id": s.id },
    el("h3", {}, s.name || s.id, " ", el("span", { class: "method" }, s.task.method)),
    el("p", { class: "muted" }, `${s.cron} (${s.tz}) · conversation ${s.conversation_id}`),
    el("p", { class: "next" }, s.paused ? "paused" : `next due ${when(s.next_due_at)}`),
    el("p", { class: "last" }, last),
    el("p", { class: "missed", "data-missed": s.missed_count }, `missed ${s.missed_count}`));
}

// ---- approvals ----------------------------------------------------------------------

/** The preview an approval shows: the one the plane rebuilt from the task's params (evidence
 * keeps it redacted), else the latest outcome evidence of the attempt that asked. */
function previewOf(status) {
  if (status.approval_preview) return status.approval_preview;
  const docs = status.evidence.filter((doc) => doc.body && doc.body.detail && doc.body.detail.preview);
  const last = docs[docs.length - 1];
  return last ? last.body.detail.preview : null;
}

/** Every task waiting for approval, asked for by state (however many other tasks there are),
 * then this tab's decisions with the state of their tasks now (``tasks``: the listed ones). */
async function renderApprovals(tasks) {
  const list = await api(`/v1/tasks?state=approval&limit=${LIST_LIMIT}&order=newest`);
  const statuses = await Promise.all(list.tasks.map((t) => api("/v1/tasks/" + encodeURIComponent(t.id))));
  const pending = statuses.filter((s) => s.task.state === "approval");
  const cards = await Promise.all(pending.map(approvalCard));
  // steps handed to the person (ui.handoff) wait beside the approvals: "waiting for you"
  const waiting = await api(`/v1/tasks?state=waiting&limit=${LIST_LIMIT}&order=newest`);
  const handed = waiting.tasks.filter((t) => (t.waiting_for || "").startsWith("person:"));
  const persons = await Promise.all(handed.map((t) => api("/v1/tasks/" + encodeURIComponent(t.id))));
  cards.push(...await Promise.all(persons.filter((s) => s.pending_person).map(personCard)));
  $("no-approvals").hidden = cards.length > 0;
  $("approval-list").replaceChildren(...cards);
  monitor.approvals = cards.length;
  const known = new Map(tasks.map((t) => [t.id, t]));
  for (const status of statuses) known.set(status.task.id, status.task);
  await renderDecisions(known);
}

async function approvalCard(status) {
  const task = status.task;
  const preview = previewOf(status) || {};
  const data = preview.data || {};
  const pending = status.pending_approval || {};
  const revision = pending.revision ?? task.approval_revision ?? task.revision;
  const digest = pending.digest ?? task.approval_digest;
  const field = (name, value, cls) =>
    el("tr", {}, el("th", {}, name), el("td", { class: cls || "" }, text(value)));
  const shot = pending.screenshot
    ? await artifactNode(task.id, "preview screenshot", text(pending.screenshot)) : null;
  const stale = pending.stale || null;
  const fresh = pending.void || null;
  const badge = stale ? el("span", { class: "badge stale" }, "stale")
    : fresh ? el("span", { class: "badge fresh" }, "fresh preview") : null;
  const card = el("div", {
    class: "card approval" + (stale ? " stale" : "") + (fresh ? " void" : ""),
    "data-task-id": task.id,
    "data-stale": stale ? text(stale.decision) : null,
    "data-void": fresh ? "1" : null,
  },
    el("h3", {}, el("a", { href: "#task=" + encodeURIComponent(task.id) }, task.id), " ", task.method,
      badge ? " " : null, badge),
    fresh ? el("p", { class: "mark void-mark", role: "note" }, text(fresh.message)) : null,
    stale ? el("p", { class: "mark stale-mark", role: "note" }, text(stale.message)) : null,
    el("table", {},
      field("source", pending.source ?? task.source, "origin-source"),
      pending.rationale != null ? field("rationale", pending.rationale, "origin-rationale") : null,
      field("effect", preview.effect, "preview-effect"),
      field("target", preview.target, "preview-target"),
      data.change != null ? field("change", data.change, "preview-change") : null,
      data.text !== undefined || data.change == null ? field("text", data.text, "preview-text") : null,
      data.app !== undefined || data.change == null ? field("app", data.app, "preview-app") : null,
      field("snapshot digest", preview.snapshot_digest, "preview-snapshot digest"),
      field("approval digest", digest, "digest"),
      field("conversation", task.conversation_id),
      field("revision", revision, "revision"),
      field("decide before", when(task.approval_deadline)),
      field("if denied", pending.after_denial || "a denial ends this task; it cannot continue",
        "after-denial")),
    el("div", { class: "preview-shot" }, shot));
  if (status.may_decide) {
    card.append(decisionButtons(task, revision, digest, !stale || stale.can_approve !== false));
  }
  return card;
}

/** A step handed to the person (ui.handoff): the planner's instruction (as text, never
 * run), the app, until when, and the screen the person was handed (input fields blanked). */
async function personCard(status) {
  const task = status.task;
  const person = status.pending_person;
  const shot = person.screen ? await artifactNode(task.id, "the screen handed over", text(person.screen)) : null;
  const field = (name, value, cls) =>
    el("tr", {}, el("th", {}, name), el("td", { class: cls || "" }, text(value)));
  return el("div", { class: "card person", "data-task-id": task.id, "data-waiting-for": "person" },
    el("h3", {}, el("a", { href: "#task=" + encodeURIComponent(task.id) }, task.id), " ", task.method,
      " ", el("span", { class: "badge person" }, "waiting for you")),
    el("p", { class: "person-instruction" }, text(person.instruction)),
    el("table", {},
      field("app", person.package, "person-app"),
      field("conversation", task.conversation_id),
      field("until", when(person.until), "person-until"),
      field("then", person.after, "person-after")),
    el("div", { class: "preview-shot" }, shot));
}

function showOutcome(node, message, kind) {
  node.textContent = message;
  node.dataset.kind = kind;
}

/** Approve / Deny for a token that may decide; the request quotes what the card shows.
 * Without ``canApprove`` (approving can only fail) Deny is the one button. A card drawn
 * again before the task moved on (same state version) shows the decision made on it. */
function decisionButtons(task, revision, digest, canApprove) {
  const outcome = el("p", { class: "decision-outcome", role: "status" });
  const decide = async (verb, buttons) => {
    for (const b of buttons) b.disabled = true;
    showOutcome(outcome, verb === "approve" ? "approving…" : "denying…", "ok");
    let result;
    try {
      const answer = await post(`/v1/tasks/${encodeURIComponent(task.id)}/${verb}`,
        { conversation_id: task.conversation_id, revision, preview_digest: digest });
      result = decisionResult(verb, answer);
    } catch (error) { // the request never got an answer
      result = { ok: false, message: `${verb} not sent: ${error.message}` };
    }
    remember(task, result);
    showOutcome(outcome, result.message, result.ok ? "ok" : "error");
    if (!result.ok) for (const b of buttons) b.disabled = false;
    refresh();
  };
  const approve = canApprove ? el("button", { type: "button", class: "approve" }, "Approve") : null;
  const deny = el("button", { type: "button", class: "deny" }, "Deny");
  const buttons = [approve, deny].filter(Boolean);
  if (approve) approve.addEventListener("click", () => decide("approve", buttons));
  deny.addEventListener("click", () => decide("deny", buttons));
  const last = monitor.decisions.get(task.id);
  if (last && last.version === task.state_version) {
    showOutcome(outcome, last.message, last.ok ? "ok" : "error");
    if (last.ok) for (const b of buttons) b.disabled = true;
  }
  return el("div", { class: "decision" },
    el("p", { class: "muted deciding" }, `Deciding revision ${text(revision)}, preview digest `,
      el("code", { class: "digest elided", title: text(digest) }, text(digest))),
    canApprove ? null : el("p", { class: "muted no-approve" }, "Approve is not offered: it can only fail."),
    approve, approve ? " " : null, deny, outcome);
}

/** What a decision's answer says: "approved: queued revision 2", "denied: stopped revision 1",
 * or the server's refusal ("refused (HTTP 409 ApprovalMismatch): <its message>"). */
function decisionResult(verb, answer) {
  const body = answer.body && typeof answer.body === "object" ? answer.body : {};
  if (answer.ok) {
    const after = body.task || {};
    return { ok: true, message: `${verb === "approve" ? "approved" : "denied"}: ` +
      `${text(after.state ?? "?")} revision ${text(after.revision ?? "?")}` };
  }
  const name = typeof body.error === "string" ? " " + body.error : "";
  const why = body.message ?? body.detail ?? "(no message)";
  return { ok: false, message: `refused (HTTP ${answer.status}${name}): ${text(why)}` };
}

/** Keep a decision made in this tab (the newest DECISIONS_KEPT, one per task). */
function remember(task, result) {
  monitor.decisions.delete(task.id);
  monitor.decisions.set(task.id, { taskId: task.id, method: task.method,
    version: task.state_version, ok: result.ok, message: result.message });
  while (monitor.decisions.size > DECISIONS_KEPT) {
    monitor.decisions.delete(monitor.decisions.keys().next().value);
  }
}

/** The task as it is now: from ``known`` (this refresh's reads), else read on its own. */
async function taskNow(id, known) {
  if (known.has(id)) return known.get(id);
  try {
    return (await api("/v1/tasks/" + encodeURIComponent(id))).task;
  } catch (error) {
    if (error instanceof AuthError) throw error;
    return null;
  }
}

/** This tab's decisions, newest first, each with its outcome and its task's state now. */
async function renderDecisions(known) {
  const decisions = [...monitor.decisions.values()].reverse();
  const now = await Promise.all(decisions.map((d) => taskNow(d.taskId, known)));
  $("decisions").hidden = decisions.length === 0;
  $("decision-list").replaceChildren(...decisions.map((d, i) => decisionCard(d, now[i])));
}

function decisionCard(decision, task) {
  const kind = decision.ok ? "ok" : "error";
  const dismiss = el("button", { type: "button", class: "dismiss" }, "Dismiss");
  const card = el("div", { class: "card decided", "data-decided-id": decision.taskId, "data-kind": kind },
    el("h4", {}, el("a", { href: "#task=" + encodeURIComponent(decision.taskId) }, decision.taskId),
      " ", decision.method),
    el("p", { class: "decision-outcome", "data-kind": kind }, decision.message),
    el("p", { class: "muted now" }, task
      ? ["now ", el("span", { class: "state " + task.state }, task.state), ` · revision ${text(task.revision)}`]
      : "now: not readable"),
    dismiss);
  dismiss.addEventListener("click", () => {
    monitor.decisions.delete(decision.taskId);
    card.remove();
    $("decisions").hidden = monitor.decisions.size === 0;
  });
  return card;
}

// ---- the selected task ----------------------------------------------------------------

function selectedTask() {
  const match = /^#task=(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

async function renderDetail() {
  const id = selectedTask();
  $("detail").hidden = !id;
  if (!id) return;
  const status = await api("/v1/tasks/" + encodeURIComponent(id));
  const task = status.task;
  $("detail-id").textContent = task.id;
  const failure = task.failure ? ` · ${task.failure.reason}: ${task.failure.message}` : "";
  $("detail-summary").textContent = `${task.method} on ${task.device || "(any)"} · ${task.state}` +
    ` · attempt ${task.attempt}/${task.max_attempts} · observed ${task.observed_target || "-"}${failure}`;
  $("transitions").tBodies[0].replaceChildren(...status.events.map((e) =>
    el("tr", { "data-cursor": e.cursor }, el("td", { class: "num" }, e.cursor),
      el("td", { class: "state " + e.state }, e.state), el("td", { class: "num" }, e.state_version),
      el("td", { class: "num" }, e.attempt), el("td", {}, e.reason || ""), el("td", {}, when(e.ts)))));
  const cards = await Promise.all(status.evidence.map((doc) => evidenceCard(task.id, doc)));
  const choice = status.pending_choice ? [choiceCard(status.pending_choice)] : [];
  $("evidence").replaceChildren(...choice,
    ...(cards.length ? cards : [el("p", { class: "muted" }, "none")]));
}

/** A task waiting for a choice (choice:FIELD): the candidates and each one's amend line. */
function choiceCard(choice) {
  return el("div", { class: "card choice", "data-choice": choice.field },
    el("h4", {}, `waiting for a choice of ${choice.field}`),
    el("p", {}, text(choice.message)),
    el("ol", {}, choice.candidates.map((c) => el("li", {}, candidateText(c) + " ",
      c.amend_command ? el("code", {}, text(c.amend_command)) : null))));
}

/** A recipient as name · number · type; another candidate (a UI element) as its fields. */
function candidateText(c) {
  if (c.number) return `${text(c.display_name)} · ${text(c.number)} · ${text(c.type_name)}`;
  const { amend, amend_command, ...fields } = c;
  return text(fields);
}

function artifactsOf(body) {
  if (!body || typeof body !== "object") return {};
  const inner = body.evidence && typeof body.evidence === "object" ? body.evidence : body;
  return inner.artifacts && typeof inner.artifacts === "object" ? inner.artifacts : {};
}

async function evidenceCard(taskId, doc) {
  const body = doc.body || {};
  const target = (body.evidence && body.evidence.target) || body.target || {};
  const artifacts = await Promise.all(Object.entries(artifactsOf(body)).map(
    ([name, value]) => artifactNode(taskId, name, text(value))));
  return el("div", { class: "card evidence", "data-ref": doc.ref },
    el("h4", {}, doc.kind, " ", el("code", {}, doc.ref), ` · attempt ${doc.attempt} · ${when(doc.created_at)}`),
    body.status ? el("p", {}, "status ", el("b", {}, text(body.status)), body.message ? " · " + text(body.message) : "") : null,
    target.expected !== undefined || target.observed !== undefined
      ? el("p", {}, `expected ${text(target.expected)} · observed ${text(target.observed)}`) : null,
    el("div", { class: "artifacts" }, artifacts));
}

/** A screenshot as an image, another artifact as its name; only this task's artifacts load. */
async function artifactNode(taskId, name, value) {
  const match = ARTIFACT_PATH.exec(value);
  if (!match || match[1] !== taskId) {
    return el("p", { class: "artifact muted" }, `${name}: ${value} (not on this server)`);
  }
  if (!monitor.blobs.has(value)) {
    let answer;
    try {
      answer = await api(value, true);
    } catch (error) { // a token that reads tasks but not screenshots keeps its session
      if (!(error instanceof AuthError) || error.status !== 403) throw error;
      return el("p", { class: "artifact muted" }, `${name}: not shown to this token`);
    }
    const blob = await answer.blob();
    monitor.blobs.set(value, IMAGE_TYPES.has(blob.type) ? URL.createObjectURL(blob) : null);
  }
  const url = monitor.blobs.get(value);
  if (url === null) return el("p", { class: "artifact" }, `${name} (${match[2]})`);
  const shot = el("img", { src: url, alt: name, class: "screenshot", "data-artifact": name,
    title: "Show large", tabIndex: 0 }); // not a <button>: a card's buttons are its decisions
  shot.setAttribute("role", "button");
  shot.addEventListener("click", () => showLarge(url, name));
  shot.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    showLarge(url, name);
  });
  return el("figure", { class: "artifact" }, shot, el("figcaption", {}, name));
}

// ---- a screenshot shown large ----------------------------------------------------------

/** The same blob shown as large as the window allows, in the modal #viewer dialog. */
function showLarge(url, name) {
  const viewer = $("viewer");
  viewer.replaceChildren(
    el("img", { src: url, alt: name, class: "screenshot enlarged", "data-artifact": name }),
    el("p", { class: "viewer-caption" }, name, " · click or press Escape to close"));
  if (!viewer.open) viewer.showModal();
}

function closeLarge() {
  const viewer = $("viewer");
  if (viewer.open) viewer.close();
}

// ---- refresh and the live loop --------------------------------------------------------

async function refreshOnce() {
  const [queue, list] = await Promise.all(
    [api("/v1/queue"), api(`/v1/tasks?limit=${LIST_LIMIT}&order=newest`)]);
  renderByState(queue.queue);
  renderByDevice(list.tasks);
  renderTasks(list.tasks);
  await Promise.all([renderWorkflows(list.tasks), renderApprovals(list.tasks), renderSchedules(),
    renderDetail()]);
  monitor.rendered += 1;
  document.body.dataset.rendered = String(monitor.rendered);
}

/** Refresh now, or once more right after the refresh that is running. */
function refresh() {
  if (monitor.refreshing) {
    monitor.again = true;
    return monitor.refreshing;
  }
  const session = monitor.session;
  monitor.refreshing = (async () => {
    try {
      do {
        monitor.again = false;
        await refreshOnce();
      } while (monitor.again && session === monitor.session);
      setStatus("live · updated " + new Date().toLocaleTimeString(), "ok");
    } catch (error) {
      failed(error);
    } finally {
      monitor.refreshing = null;
    }
  })();
  return monitor.refreshing;
}

function failed(error) {
  if (error instanceof AuthError) {
    signOut(error.message);
  } else {
    setStatus("disconnected, retrying: " + error.message, "error");
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Move the cursor to the newest event, then long-poll and refresh on every batch. */
async function follow(session) {
  while (session === monitor.session) {
    try {
      const batch = await api(`/v1/events?after=${monitor.cursor}&limit=1000&wait=0`);
      monitor.cursor = batch.cursor;
      if (batch.events.length < 1000) break;
    } catch (error) {
      failed(error);
      await sleep(RETRY_MS);
    }
  }
  while (session === monitor.session) {
    try {
      const pending = monitor.approvals > 0;
      const batch = await api(`/v1/events?after=${monitor.cursor}&wait=${pending ? APPROVAL_WAIT_S : WAIT_S}`);
      if (session !== monitor.session) return;
      monitor.cursor = batch.cursor;
      if (batch.events.length || pending) await refresh();
    } catch (error) {
      failed(error);
      await sleep(RETRY_MS);
    }
  }
}

// ---- sign in and out ------------------------------------------------------------------

function showBoard(on) {
  $("signin").hidden = on;
  $("board").hidden = !on;
  $("signout").hidden = !on;
}

function start() {
  monitor.session += 1;
  monitor.cursor = 0;
  showBoard(true);
  setStatus("loading…", "ok");
  const session = monitor.session;
  refresh().then(() => follow(session));
}

/** Drop what the last token read: its screenshots, its decisions, the large view. */
function forget() {
  monitor.session += 1;
  closeLarge();
  for (const url of monitor.blobs.values()) if (url) URL.revokeObjectURL(url);
  monitor.blobs.clear();
  monitor.decisions.clear();
}

function signIn(value) {
  forget();
  sessionStorage.setItem(TOKEN_KEY, value);
  start();
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  forget();
  showBoard(false);
  setStatus(message || "signed out", message ? "error" : "ok");
}

/** A token handed over in the address (``/monitor#token=...``, with or without ``&task=``):
 * the address is rewritten without it (history.replaceState, so this tab's history entry
 * loses it too) before anything is fetched; the token itself, or null. */
function tokenFromAddress() {
  const parts = location.hash.replace(/^#/, "").split("&");
  const given = parts.filter((part) => part.startsWith("token="));
  if (!given.length) return null;
  const rest = parts.filter((part) => part && !part.startsWith("token=")).join("&");
  history.replaceState(history.state, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  try {
    return decodeURIComponent(given[given.length - 1].slice("token=".length)).trim() || null;
  } catch (error) { // a malformed %-escape: no token
    return null;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("signin").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("token");
    const value = input.value.trim();
    input.value = "";
    if (value) signIn(value);
  });
  $("signout").addEventListener("click", () => signOut());
  $("viewer").addEventListener("click", closeLarge); // anywhere: the picture or around it
  $("viewer").addEventListener("close", () => $("viewer").replaceChildren());
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeLarge(); });
  window.addEventListener("hashchange", () => {
    const given = tokenFromAddress();
    if (given) signIn(given);
    else if (token()) refresh();
  });
  const given = tokenFromAddress();
  if (given) signIn(given);
  else if (token()) start();
});
