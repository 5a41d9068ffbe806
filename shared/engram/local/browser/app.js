// The memory browser: plain JavaScript over engram's HTTP API (no build step).
"use strict";
const $ = (selector, root = document) => root.querySelector(selector);
const state = { world: "", user: "", entities: new Map() };

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

async function api(path, options = {}) {
  const headers = { "content-type": "application/json" };
  const key = $("#key").value.trim();
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(path, { ...options, headers });
  const body = response.status === 204 ? null : await response.json();
  if (!response.ok) {
    const error = (body && body.error) || {};
    throw new Error(`${response.status} ${error.code || ""}: ${error.message || response.statusText}`);
  }
  return body;
}

function say(message, isError = false) {
  const status = $("#status");
  status.textContent = message;
  status.className = isError ? "error" : "";
}

async function openWorld(world) {
  state.world = world;
  const base = `/v1/worlds/${encodeURIComponent(world)}`;
  const [users, entities] = await Promise.all([api(`${base}/users`), api(`${base}/entities?limit=200`)]);
  state.entities = new Map(entities.map((e) => [e.entity_id, e]));
  const list = $("#users ul");
  list.replaceChildren();
  for (const user of users) {
    const button = text("button", user.user_id);
    button.dataset.user = user.user_id;
    button.append(document.createElement("br"), text("small", `${user.events} events, ${user.conversations} conversations`));
    button.addEventListener("click", () => openUser(user.user_id));
    const li = document.createElement("li");
    li.append(button);
    list.append(li);
  }
  showEntities(entities);
  say(`${users.length} users, ${entities.length} entities in ${world}`);
  if (users.length) await openUser(users[0].user_id);
}

async function openUser(user) {
  state.user = user;
  for (const b of document.querySelectorAll("#users button")) b.classList.toggle("active", b.dataset.user === user);
  const base = `/v1/worlds/${encodeURIComponent(state.world)}`;
  const u = `${base}/users/${encodeURIComponent(user)}`;
  const [events, facts, summaries, conflicts] = await Promise.all([
    api(`${u}/events?limit=100`), api(`${u}/memories?layer=semantic&limit=100`),
    api(`${u}/memories?layer=summary&limit=20`), api(`${base}/conflicts`)]);
  showEvents(events);
  showFacts(facts, conflicts);
  showSummaries(summaries);
  for (const section of ["#ask", "#events", "#facts", "#summaries"]) $(section).hidden = false;
  $("#ask .who").textContent = `as ${user}`;
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

function showFacts(facts, conflicts) {
  $("#facts tbody").replaceChildren(...facts.map((f) => row([entityName(f.subject_entity_id),
    f.predicate.replaceAll("_", " "), f.object_value, confidence(f.confidence), badge(f.status)])));
  const ids = new Set(facts.map((f) => f.memory_id));
  const mine = conflicts.filter((c) => ids.has(c.memory_id) || ids.has(c.conflicting_memory_id));
  $("#conflicts").replaceChildren(...(mine.length ? mine.map((c) => {
    const li = text("li", `${c.memory_id} vs ${c.conflicting_memory_id}: ${c.reason || ""} `);
    li.append(badge(c.status));
    return li;
  }) : [text("li", "none")]));
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
  const base = `/v1/worlds/${encodeURIComponent(state.world)}`;
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
  const base = `/v1/worlds/${encodeURIComponent(state.world)}`;
  const reply = await api(`${base}/queries`, { method: "POST", body: JSON.stringify({ user_id: state.user, question }) });
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
$("#question").addEventListener("submit", (event) => {
  event.preventDefault();
  ask($("#q").value.trim()).catch((err) => { $("#answer").replaceChildren(text("p", err.message, "error")); });
});
const initial = new URLSearchParams(location.search).get("world");
if (initial) $("#world").value = initial;
openWorld($("#world").value.trim()).catch((err) => say(err.message, true));
