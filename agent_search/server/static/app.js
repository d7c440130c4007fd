// The chat page of agent-search serve: no build step, no dependencies, works offline.
// Everything that comes from the server (answers, titles, contents, urls) is untrusted:
// it is only ever set with textContent, and only http(s) urls become links.
"use strict";

const KEY = "agent-search-api-key";
const $ = (id) => document.getElementById(id);
const state = { assistants: new Map(), references: new Map(), busy: false };

function apiKey() { return sessionStorage.getItem(KEY) || ""; }

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = apiKey();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

function setStatus(text) { $("status").textContent = text; }

function askForKey(message) {
  $("key-form").hidden = false;
  setStatus(message);
  $("api-key").focus();
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function safeUrl(url) {
  if (typeof url !== "string") return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch (_) {
    return null;
  }
}

async function loadAssistants() {
  let response;
  try {
    response = await fetch("/v1/models", { headers: headers() });
  } catch (_) {
    setStatus("The server cannot be reached.");
    return;
  }
  if (response.status === 401) {
    askForKey("This server needs an API key.");
    return;
  }
  if (!response.ok) {
    setStatus(await errorText(response));
    return;
  }
  const body = await response.json();
  const select = $("assistant");
  select.replaceChildren();
  state.assistants.clear();
  for (const model of body.data || []) {
    state.assistants.set(model.id, model);
    const option = el("option", null, model.name ? `${model.name} (${model.id})` : model.id);
    option.value = model.id;
    select.append(option);
  }
  const remembered = sessionStorage.getItem(KEY + ":assistant");
  if (remembered && state.assistants.has(remembered)) select.value = remembered;
  describeAssistant();
  setStatus(state.assistants.size ? "" : "No assistants are configured.");
}

function describeAssistant() {
  const model = state.assistants.get($("assistant").value);
  $("assistant-about").textContent = model && model.description ? model.description : "";
  if (model) sessionStorage.setItem(KEY + ":assistant", model.id);
}

async function errorText(response) {
  try {
    const body = await response.json();
    return (body.error && body.error.message) || response.statusText;
  } catch (_) {
    return response.statusText || "request failed";
  }
}

// --- the answer, with citation markers turned into buttons ------------------------------

function markerPattern(format) {
  const escaped = (format || "#ref:{id}").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(escaped.replace("\\{id\\}", "([A-Za-z0-9_-]+)"), "g");
}

function renderAnswer(target, text, pattern) {
  const nodes = [];
  let last = 0;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m.index > last) nodes.push(document.createTextNode(text.slice(last, m.index)));
    const id = m[1];
    const button = el("button", "cite", `[${id}]`);
    button.type = "button";
    button.dataset.citation = id;
    button.setAttribute("aria-label", `Open reference ${id}`);
    nodes.push(button);
    last = m.index + m[0].length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  target.replaceChildren(...nodes);
}

function openReference(id, opener) {
  const ref = state.references.get(id);
  $("panel-title").textContent = `Reference ${id}`;
  $("ref-title").textContent = ref ? ref.title || "(untitled)" : "(not in this answer's references)";
  const where = ref ? [ref.type, ref.source, ref.collection, ref.model].filter(Boolean) : [];
  $("ref-source").textContent = where.join(" · ") || "—";
  const link = safeUrl(ref && ref.url);
  const urlBox = $("ref-url");
  urlBox.replaceChildren();
  if (link) {
    const a = el("a", null, link);
    a.href = link;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    urlBox.append(a);
  } else {
    urlBox.textContent = ref && ref.url ? String(ref.url) : "—";
  }
  const content = ref && ref.content;
  $("ref-content").textContent = content || "(the content arrives when the answer is complete)";
  const panel = $("panel");
  panel.hidden = false;
  panel.dataset.opener = opener && opener.dataset ? opener.dataset.citation || "" : "";
  state.opener = opener || null;
  panel.focus();
}

function closePanel() {
  $("panel").hidden = true;
  if (state.opener && document.contains(state.opener)) state.opener.focus();
}

// --- one question: the native event stream --------------------------------------------

function* frames(buffer) {
  // yields [event, data] for each complete frame; the caller keeps the rest
  let index;
  while ((index = buffer.text.indexOf("\n\n")) >= 0) {
    const block = buffer.text.slice(0, index);
    buffer.text = buffer.text.slice(index + 2);
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length) yield [name, data.join("\n")];
  }
}

function newTurn(question) {
  const turn = el("li", "turn");
  turn.append(el("p", "question", question));
  const searches = el("ul", "searches");
  searches.setAttribute("aria-label", "Searches");
  const answer = el("div", "answer");
  answer.setAttribute("aria-live", "polite");
  turn.append(searches, answer);
  $("log").append(turn);
  turn.scrollIntoView({ block: "end" });
  return { turn, searches, answer, rows: new Map(), counts: new Map(), text: "" };
}

function onEvent(view, name, event, pattern) {
  if (name === "search_start") {
    const row = el("li", "search running", `Searching ${event.type}: “${event.query}”…`);
    row.dataset.search = event.id;
    view.rows.set(event.id, row);
    view.searches.append(row);
  } else if (name === "search_result") {
    view.counts.set(event.id, (view.counts.get(event.id) || 0) + 1);
    if (event.citation_id) {
      state.references.set(String(event.citation_id), {
        title: event.title, url: event.url, score: event.score,
      });
    }
  } else if (name === "search_complete") {
    const row = view.rows.get(event.id) || el("li", "search");
    const seconds = (Number(event.duration_ms) / 1000).toFixed(2);
    if (event.error) {
      row.className = "search failed";
      row.textContent = `${event.type} search failed: ${event.error}`;
    } else {
      row.className = "search done";
      row.textContent = `${event.type}: ${event.count} result${event.count === 1 ? "" : "s"} (${seconds} s)`;
    }
  } else if (name === "text") {
    view.text += event.text;
    renderAnswer(view.answer, view.text, pattern);
  } else if (name === "done") {
    for (const ref of event.references || []) {
      state.references.set(String(ref.citation_id), ref);
    }
    if (event.error) view.turn.append(el("p", "error", event.error));
  }
}

async function ask(question) {
  const assistant = $("assistant").value;
  if (!assistant) { setStatus("Pick an assistant first."); return; }
  const model = state.assistants.get(assistant) || {};
  const pattern = markerPattern(model.citation_format);
  const view = newTurn(question);
  state.busy = true;
  $("send").disabled = true;
  setStatus("Searching…");
  try {
    const response = await fetch(`/v1/assistants/${encodeURIComponent(assistant)}/stream`, {
      method: "POST", headers: headers(),
      body: JSON.stringify({ messages: [{ role: "user", content: question }] }),
    });
    if (response.status === 401) { askForKey("This server needs an API key."); return; }
    if (!response.ok || !response.body) {
      view.turn.append(el("p", "error", await errorText(response)));
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const buffer = { text: "" };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer.text += value.replace(/\r\n/g, "\n");
      for (const [name, data] of frames(buffer)) {
        let event;
        try { event = JSON.parse(data); } catch (_) { continue; }
        onEvent(view, name, event, pattern);
        if (name === "text") setStatus("Answering…");
      }
    }
    setStatus("Done.");
  } catch (err) {
    view.turn.append(el("p", "error", `The stream failed: ${err && err.message}`));
    setStatus("");
  } finally {
    state.busy = false;
    $("send").disabled = false;
  }
}

// --- wiring ---------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY, $("api-key").value.trim());
    $("api-key").value = "";
    $("key-form").hidden = true;
    loadAssistants();
  });
  $("assistant").addEventListener("change", describeAssistant);
  $("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const question = $("question").value.trim();
    if (!question || state.busy) return;
    $("question").value = "";
    ask(question);
  });
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("log").addEventListener("click", (e) => {
    const button = e.target.closest("button.cite");
    if (button) openReference(button.dataset.citation, button);
  });
  $("panel-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !$("panel").hidden) closePanel();
  });
  loadAssistants();
});
