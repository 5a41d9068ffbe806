// The memory browser: plain JavaScript over engram's HTTP API (no build step).
"use strict";
const $ = (selector, root = document) => root.querySelector(selector);
const state = { world: "", user: "", entities: new Map(), generation: 0 };
const WORLD_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

function text(tag, content, cls) {
  const el = document.createElement(tag);
  el.textContent = content == null ? "" : String(content);
  if (cls) el.className = cls;
  return el;
}

function badge(value) { return text("span", value, `badge ${value}`); }

function row(cells) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    td.append(cell instanceof Node ? cell : text("span", cell));
    tr.append(td);
  }
  return tr;
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : ""; }

// The API's errors read as "status code: message (field: why; ...)", never swallowed.
async function api(path, options = {}) {
  const headers = { "content-type": "application/json" };
  const key = $("#key").value.trim();
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(path, { ...options, headers });
  const raw = response.status === 204 ? "" : await response.text();
  let body = null;
  try { body = raw ? JSON.parse(raw) : null; } catch { body = null; }
  if (!response.ok) {
    const error = (body && body.error) || {};
    const fields = Array.isArray(error.details) ? error.details.map((d) =>
      `${(d.loc || []).filter((part) => part !== "body").join(".") || "request"}: ${d.msg}`) : [];
    const message = error.message || raw.slice(0, 200) || response.statusText;
    throw new Error(`${response.status} ${error.code || ""}: ${message}${fields.length ? ` (${fields.join("; ")})` : ""}`);
  }
  return body;
}

// One request after the other, never in parallel: the local server runs the Lambda handlers, whose Powertools
// resolver keeps the request being served in shared state (two at once can be validated against each other).
async function sequentially(paths) {
  const bodies = [];
  for (const path of paths) bodies.push(await api(path));
  return bodies;
}

const worldPath = () => `/v1/worlds/${encodeURIComponent(state.world)}`;

function say(message, isError = false) {
  const status = $("#status");
  status.textContent = message;
  status.className = isError ? "error" : "";
}

// A panel's own error line: an action's failure shows where it was tried; null clears it.
function problem(id, err) {
  const line = $(`#${id}-problem`);
  line.textContent = err ? err.message : "";
  line.hidden = !err;
}

// Runs a button's action once (the button is disabled meanwhile); a failure shows on the panel.
function action(label, panel, run, cls) {
  const button = text("button", label, cls);
  button.type = "button";
  button.addEventListener("click", async () => {
    button.disabled = true;
    try { problem(panel, null); await run(); } catch (err) { problem(panel, err); } finally { button.disabled = false; }
  });
  return button;
}

const SECTIONS = ["#ask", "#events", "#facts", "#disambiguations", "#summaries", "#entities"];

// Nothing of the previous world stays on screen while another opens (or fails to).
function clearWorld() {
  state.world = ""; state.user = ""; state.entities = new Map();
  for (const section of SECTIONS) $(section).hidden = true;
  for (const list of ["#users ul", "#events tbody", "#facts tbody", "#conflicts", "#disambiguations ul",
    "#summaries ul", "#entities .list", "#graph", "#answer"]) $(list).replaceChildren();
  for (const panel of ["facts", "conflicts", "disambiguations"]) problem(panel, null);
}

async function loadWorlds() {
  const worlds = await api("/v1/worlds");
  const picker = $("#worlds");
  picker.replaceChildren(text("option", "(pick one)"), ...worlds.map((w) => {
    const option = text("option", `${w.world_id} (${w.events} events)`);
    option.value = w.world_id;
    return option;
  }));
  picker.firstChild.value = "";
  return worlds;
}

async function openWorld(world) {
  const generation = ++state.generation;
  clearWorld();
  $("#world").value = world;
  history.replaceState(null, "", `?world=${encodeURIComponent(world)}`);
  say(`opening ${world}...`);
  const worlds = await loadWorlds();
  if (generation !== state.generation) return;  // another world was opened meanwhile
  const known = WORLD_ID.test(world) && worlds.some((w) => w.world_id === world);
  $("#worlds").value = known ? world : "";
  if (!known) {
    say(`no world named "${world}"${worlds.length ? ": pick one of the known worlds" : ""}`, true);
    return;
  }
  const base = `/v1/worlds/${encodeURIComponent(world)}`;
  const [users, entities] = await sequentially([`${base}/users`, `${base}/entities?limit=200`]);
  if (generation !== state.generation) return;
  state.world = world;
  state.entities = new Map(entities.map((e) => [e.entity_id, e]));
  const list = $("#users ul");
  list.replaceChildren();
  for (const user of users) {
    const button = text("button", user.user_id);
    button.dataset.user = user.user_id;
    button.append(document.createElement("br"), text("small", `${user.events} events, ${user.conversations} conversations`));
    button.addEventListener("click", () => openUser(user.user_id).catch((err) => say(err.message, true)));
    const li = document.createElement("li");
    li.append(button);
    list.append(li);
  }
  showEntities(entities);
  say(`${users.length} users, ${entities.length} entities in ${world}`);
  if (users.length) await openUser(users[0].user_id);
}

async function openUser(user) {
  const generation = ++state.generation;
  state.user = user;
  for (const b of document.querySelectorAll("#users button")) b.classList.toggle("active", b.dataset.user === user);
  const base = worldPath();
  const u = `${base}/users/${encodeURIComponent(user)}`;
  const [events, facts, summaries, conflicts, waiting] = await sequentially([
    `${u}/events?limit=100`, `${u}/memories?layer=semantic&limit=100`, `${u}/memories?layer=summary&limit=20`,
    `${base}/conflicts`, `${base}/disambiguations?user_id=${encodeURIComponent(user)}&limit=50`]);
  const sentences = [];  // each mention's event, for its sentence (an event gone meanwhile: no sentence)
  for (const m of waiting) {
    sentences.push(await api(`${base}/events/${encodeURIComponent(m.event_id)}`).then((e) => e.content, () => ""));
  }
  if (generation !== state.generation) return;
  showEvents(events);
  showFacts(facts);
  showConflicts(conflicts, facts);
  showDisambiguations(waiting, sentences);
  showSummaries(summaries);
  for (const section of SECTIONS) $(section).hidden = false;
  $("#ask .who").textContent = `as ${user}`;
}

// After an edit: the world's entities (a settlement may add one) and the user's panels again.
async function refresh() {
  const generation = state.generation;
  const entities = await api(`${worldPath()}/entities?limit=200`);
  if (generation !== state.generation) return;
  state.entities = new Map(entities.map((e) => [e.entity_id, e]));
  showEntities(entities);
  await openUser(state.user);
}

function showEvents(events) {
  const body = $("#events tbody");
  body.replaceChildren(...events.map((e) => row([when(e.occurred_at), e.role, e.content, e.importance.toFixed(2),
    badge(e.enrichment_status)])));
}

function entityName(id) { return (state.entities.get(id) || {}).name || id; }

function confidence(value) {
  const span = document.createElement("span");
  const bar = text("span", "", "bar");
  bar.style.width = `${Math.round(value * 60)}px`;
  span.append(bar, text("span", value.toFixed(2)));
  return span;
}

function statement(f) { return `${entityName(f.subject_entity_id)} ${f.predicate.replaceAll("_", " ")} ${f.object_value}`; }

function validTime(f) {
  if (!f.valid_from && !f.valid_to) return "";
  return `${f.valid_from ? when(f.valid_from) : "..."} to ${f.valid_to ? when(f.valid_to) : "now"}`;
}

// An ISO time as a datetime-local input's value (local time, to the minute), and back.
function localInput(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}
function isoFromInput(value) { return value ? new Date(value).toISOString() : null; }

function showFacts(facts) {
  $("#facts tbody").replaceChildren(...facts.map(factRow));
  if (!facts.length) $("#facts tbody").append(row(["none yet", "", "", "", "", "", ""]));
}

function factRow(f) {
  const tr = row([entityName(f.subject_entity_id), f.predicate.replaceAll("_", " "), f.object_value,
    confidence(f.confidence), validTime(f), badge(f.status), ""]);
  tr.dataset.memory = f.memory_id;
  tr.lastChild.replaceChildren(
    action("correct", "facts", async () => tr.replaceWith(editRow(f)), "small"),
    action("delete", "facts", async () => {
      if (!confirm(`Delete "${statement(f)}"? An audit record keeps what it was.`)) return;
      await api(`${worldPath()}/memories/${encodeURIComponent(f.memory_id)}`, { method: "DELETE" });
      say(`deleted "${statement(f)}" (the audit keeps it)`);
      await refresh();
    }, "small danger"));
  return tr;
}

// The inline correction: only the fields changed are sent (PATCH); an emptied valid time clears it.
function editRow(f) {
  const tr = document.createElement("tr");
  tr.className = "editing";
  tr.dataset.memory = f.memory_id;
  const input = (name, value, attrs = {}) => {
    const el = document.createElement("input");
    Object.assign(el, { name, value: value == null ? "" : String(value), ...attrs });
    el.setAttribute("aria-label", name.replaceAll("_", " "));
    return el;
  };
  const fields = {
    object_value: input("object_value", f.object_value),
    confidence: input("confidence", f.confidence, { type: "number", step: "0.01", min: "0", max: "1" }),
    valid_from: input("valid_from", localInput(f.valid_from), { type: "datetime-local" }),
    valid_to: input("valid_to", localInput(f.valid_to), { type: "datetime-local" }),
  };
  const save = action("save", "facts", async () => {
    const patch = {};
    if (fields.object_value.value !== f.object_value) patch.object_value = fields.object_value.value;
    if (fields.confidence.value !== String(f.confidence)) patch.confidence = fields.confidence.value === "" ? null : Number(fields.confidence.value);
    for (const name of ["valid_from", "valid_to"]) {
      if (fields[name].value !== localInput(f[name])) patch[name] = isoFromInput(fields[name].value);
    }
    if (!Object.keys(patch).length) { tr.replaceWith(factRow(f)); return; }
    await api(`${worldPath()}/memories/${encodeURIComponent(f.memory_id)}`, { method: "PATCH", body: JSON.stringify(patch) });
    say(`corrected "${statement(f)}"`);
    await refresh();
  });
  const cancel = action("cancel", "facts", async () => { problem("facts", null); tr.replaceWith(factRow(f)); }, "small plain");
  tr.append(...[entityName(f.subject_entity_id), f.predicate.replaceAll("_", " ")].map((v) => {
    const td = document.createElement("td"); td.append(text("span", v)); return td;
  }));
  const cells = [[fields.object_value], [fields.confidence],
    [text("small", "from "), fields.valid_from, text("small", " to "), fields.valid_to], [badge(f.status)], [save, cancel]];
  for (const content of cells) {
    const td = document.createElement("td");
    td.append(...content);
    tr.append(td);
  }
  return tr;
}

function side(fact, fallbackId, label, conflict, winner) {
  const div = document.createElement("div");
  div.className = "side";
  if (!fact) { div.append(text("p", `(fact ${fallbackId} is gone)`, "meta")); return div; }
  div.dataset.memory = fact.memory_id;
  div.append(text("p", statement(fact), "statement"),
    text("p", `confidence ${fact.confidence.toFixed(2)} - since ${when(fact.valid_from || fact.created_at)}`, "meta"));
  if (winner === fact.memory_id) div.append(badge("kept"));
  if (conflict.resolved_by !== "user") {
    div.append(action(label, "conflicts", () => resolve(conflict, { winner_memory_id: fact.memory_id })));
  }
  return div;
}

async function resolve(conflict, answer) {
  await api(`${worldPath()}/conflicts/${encodeURIComponent(conflict.conflict_id)}/resolution`,
    { method: "POST", body: JSON.stringify(answer) });
  say("conflict resolved");
  await refresh();
}

// Both statements side by side (never ids); the user may settle an open one or overturn the rules' choice.
function showConflicts(conflicts, facts) {
  const ids = new Set(facts.map((f) => f.memory_id));
  const mine = conflicts.filter((c) => [c.memory, c.conflicting_memory].some((m) => m && m.user_id === state.user)
    || ids.has(c.memory_id) || ids.has(c.conflicting_memory_id));
  mine.sort((a, b) => (a.status === "open" ? 0 : 1) - (b.status === "open" ? 0 : 1));
  $("#conflicts").replaceChildren(...(mine.length ? mine.map((c) => {
    const li = document.createElement("li");
    li.dataset.conflict = c.conflict_id;
    const by = c.resolved_by ? ` by ${c.resolved_by === "user" ? "you" : "the rules"}` : "";
    const head = text("p", `${c.reason || c.kind.replaceAll("_", " ")} `, "meta");
    head.append(badge(c.status), text("small", by));
    const pair = document.createElement("div");
    pair.className = "pair";
    pair.append(side(c.memory, c.memory_id, "keep this", c, c.winner_memory_id),
      side(c.conflicting_memory, c.conflicting_memory_id, "keep that", c, c.winner_memory_id));
    li.append(head, pair);
    if (c.resolved_by !== "user") li.append(action("keep both", "conflicts", () => resolve(c, { keep_both: true }), "plain"));
    return li;
  }) : [text("li", "none")]));
}

// The sentence around a mention, with the mention marked.
function sentenceOf(content, start, end) {
  const stops = [...content.slice(0, start).matchAll(/[.!?\n]\s*/g)];
  const from = stops.length ? stops.at(-1).index + stops.at(-1)[0].length : 0;
  const after = content.slice(end).search(/[.!?\n]/);
  const to = after < 0 ? content.length : end + after + 1;
  const p = document.createElement("p");
  p.className = "sentence";
  p.append(content.slice(from, start), text("mark", content.slice(start, end)), content.slice(end, to));
  return p;
}

function showDisambiguations(waiting, contents) {
  $("#disambiguations ul").replaceChildren(...(waiting.length ? waiting.map((m, i) => {
    const li = document.createElement("li");
    li.dataset.mention = m.mention_id;
    const settle = (answer) => async () => {
      await api(`${worldPath()}/disambiguations/${encodeURIComponent(m.mention_id)}/resolution`,
        { method: "POST", body: JSON.stringify(answer) });
      say(`"${m.text}" settled`);
      await refresh();
    };
    const choices = document.createElement("div");
    choices.className = "choices";
    choices.append(...m.candidates.map((c) => action(`${c.name || entityName(c.entity_id)} (${c.score.toFixed(2)})`,
      "disambiguations", settle({ entity_id: c.entity_id }))),
    action("new entity", "disambiguations", settle({ new_entity: true }), "plain"));
    li.append(text("p", `"${m.text}" in conversation ${m.conversation_id}`, "statement"),
      contents[i] ? sentenceOf(contents[i], m.start, m.end) : text("p", `(in event ${m.event_id})`, "meta"), choices);
    return li;
  }) : [text("li", "none waiting")]));
}

function showSummaries(summaries) {
  $("#summaries ul").replaceChildren(...(summaries.length ? summaries.map((s) =>
    text("li", `${s.scope_kind} ${s.scope_id}: ${s.content}`)) : [text("li", "none yet (consolidation writes them)")]));
}

function showEntities(entities) {
  $("#entities").hidden = false;
  $("#entities .list").replaceChildren(...entities.map((e) => {
    const li = document.createElement("li");
    const button = text("button", e.name);
    button.addEventListener("click", () => openEntity(e.entity_id));
    li.append(button, text("span", ` ${e.entity_type}`, "aliases"));
    if (e.aliases && e.aliases.length) li.append(text("span", ` (${e.aliases.join(", ")})`, "aliases"));
    return li;
  }));
}

async function openEntity(id) {
  const base = worldPath();
  const relationships = await api(`${base}/entities/${encodeURIComponent(id)}/relationships?depth=2`);
  drawGraph(id, relationships);
}

function drawGraph(center, relationships) {
  const svg = $("#graph");
  const ns = "http://www.w3.org/2000/svg";
  const ids = [center, ...new Set(relationships.flatMap((r) => [r.source_entity_id, r.target_entity_id]))]
    .filter((id, i, all) => all.indexOf(id) === i);
  const place = new Map(ids.map((id, i) => {
    if (i === 0) return [id, [240, 160]];
    const angle = (2 * Math.PI * (i - 1)) / Math.max(1, ids.length - 1);
    return [id, [240 + 170 * Math.cos(angle), 160 + 120 * Math.sin(angle)]];
  }));
  svg.replaceChildren();
  for (const r of relationships) {
    const [x1, y1] = place.get(r.source_entity_id);
    const [x2, y2] = place.get(r.target_entity_id);
    const line = document.createElementNS(ns, "line");
    Object.entries({ x1, y1, x2, y2 }).forEach(([k, v]) => line.setAttribute(k, v));
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", (x1 + x2) / 2);
    label.setAttribute("y", (y1 + y2) / 2 - 3);
    label.textContent = r.relation.replaceAll("_", " ");
    svg.append(line, label);
  }
  for (const [id, [x, y]] of place) {
    const circle = document.createElementNS(ns, "circle");
    circle.setAttribute("cx", x); circle.setAttribute("cy", y); circle.setAttribute("r", id === center ? 9 : 6);
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", x + 10); label.setAttribute("y", y + 4);
    label.textContent = entityName(id);
    svg.append(circle, label);
  }
}

async function ask(question) {
  const out = $("#answer");
  out.replaceChildren(text("p", "thinking...", "meta"));
  const reply = await api(`${worldPath()}/queries`, { method: "POST", body: JSON.stringify({ user_id: state.user, question }) });
  const answer = reply.answer || { content: "(no answer)", confidence: 0, sources: [] };
  const sources = document.createElement("ol");
  sources.append(...answer.sources.map((s) => text("li", `[${s.kind}] ${s.excerpt}`)));
  const trace = document.createElement("table");
  trace.className = "trace";
  trace.append(row(["iteration", "step", "outcome", "ms"]));
  trace.append(...reply.trace.map((t) => row([t.iteration, t.step, t.outcome, t.elapsed_ms.toFixed(1)])));
  out.replaceChildren(text("p", answer.content, "content"),
    text("p", `confidence ${answer.confidence.toFixed(2)} - ${reply.iterations} iterations, ${reply.info_requests_used} info requests - ${reply.model}${answer.forced ? " - forced" : ""}`, "meta"),
    text("h3", "sources"), sources, text("h3", "loop trace"), trace);
}

$("#pick").addEventListener("submit", (event) => {
  event.preventDefault();
  openWorld($("#world").value.trim()).catch((err) => say(err.message, true));
});
$("#worlds").addEventListener("change", () => {
  if ($("#worlds").value) openWorld($("#worlds").value).catch((err) => say(err.message, true));
});
$("#question").addEventListener("submit", (event) => {
  event.preventDefault();
  ask($("#q").value.trim()).catch((err) => { $("#answer").replaceChildren(text("p", err.message, "error")); });
});
const initial = new URLSearchParams(location.search).get("world");
if (initial) $("#world").value = initial;
openWorld($("#world").value.trim()).catch((err) => say(err.message, true));
