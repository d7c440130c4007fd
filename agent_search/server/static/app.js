// The chat page of agent-search serve: no build step, no dependencies, works offline.
// Everything that comes from the server (answers, titles, contents, urls) is untrusted:
// it is set with textContent, except the answer, which is Markdown rendered by the
// vendored marked and sanitised by the vendored DOMPurify (static/vendor/); only http(s)
// urls become links.
"use strict";

const KEY = "agent-search-api-key";
const $ = (id) => document.getElementById(id);
const state = { assistants: new Map(), references: new Map(), busy: false, uploading: false,
                notices: new Set(), history: [] };
// the conversation so far (the chat is stateless: every question sends the earlier turns,
// so a follow-up is read in their context); a new assistant starts a new conversation
const MAX_HISTORY = 12;

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
  state.history = [];
  offerCollections(model);
  offerExamples(model);
}

function offerExamples(model) {
  // an empty conversation shows the assistant's example questions (package.yao's
  // "examples"), each a button that asks it
  const old = $("examples");
  if (old) old.remove();
  const examples = model && Array.isArray(model.examples) ? model.examples : [];
  if ($("log").querySelector(".turn") || !examples.length) return;
  const box = el("li", "examples");
  box.id = "examples";
  box.append(el("p", "examples-head", "Try asking:"));
  for (const text of examples.slice(0, 8)) {
    const button = el("button", "example", text);
    button.type = "button";
    button.addEventListener("click", () => {
      if (state.busy) return;
      $("question").value = String(text);
      $("ask-form").requestSubmit();
    });
    box.append(button);
  }
  $("log").append(box);
}

async function errorText(response) {
  try {
    const body = await response.json();
    return (body.error && body.error.message) || response.statusText;
  } catch (_) {
    return response.statusText || "request failed";
  }
}

// --- the answer: Markdown, sanitised, with citation chips and grounding marks ----------
//
// The answer is Markdown from a model that read untrusted references: it is rendered by
// marked, then sanitised by DOMPurify (no script, no event handler, no style, no form,
// no image, only http(s) and mailto links) before it touches the page. Citation markers
// become buttons afterwards, on text nodes only. Grounding marks are put in the Markdown
// source as private-use characters (removed from the answer first, so the answer cannot
// forge them) and turned into elements after sanitising.

const MARK_OPEN = "\uE000";   // an unsupported sentence starts
const MARK_CLOSE = "\uE001";  // ... and ends
const MARK_ADDED = "\uE002";  // citations the grounding added go here
const PRIVATE = /[\uE000-\uE0FF]/g;
const PURIFY = {
  FORBID_TAGS: ["style", "img", "form", "input", "button", "textarea", "select", "option",
                "iframe", "object", "embed", "svg", "math", "video", "audio", "source"],
  FORBID_ATTR: ["style", "class", "id", "name", "srcset", "action", "formaction"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};

function markerPattern(format) {
  const escaped = (format || "#ref:{id}").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(escaped.replace("\\{id\\}", "([A-Za-z0-9_-]+)"), "g");
}

function citeButton(id, added) {
  const button = el("button", added ? "cite added" : "cite", added ? `[+${id}]` : `[${id}]`);
  button.type = "button";
  button.dataset.citation = id;
  button.setAttribute("aria-label", added
    ? `Open reference ${id} (added: the answer did not cite it)` : `Open reference ${id}`);
  if (added) button.title = "Added by the grounding check: this reference supports the sentence";
  return button;
}

function annotate(text, grounding) {
  // The answer with grounding marks inserted, and the marks' payloads in order. Offsets
  // count code points (Python's), so the text is walked as code points; private-use
  // characters of the answer become U+FFFD first (same length), so none can pose as a mark.
  const chars = Array.from(text.replace(PRIVATE, "\uFFFD"));
  const inserts = [];
  const flags = [];
  const added = [];
  for (const entry of Array.isArray(grounding) ? grounding : []) {
    const start = Number(entry.start), end = Number(entry.end);
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > chars.length || start >= end) continue;
    if (entry.status === "unsupported" || entry.status === "unchecked") {
      // unchecked: the check could not run on it, which is no "supported" either
      inserts.push([start, MARK_OPEN], [end, MARK_CLOSE]);
      const reason = String(entry.reason || "No reference supports this sentence.");
      flags.push(entry.status === "unchecked" ? "Not checked: " + reason : reason);
    }
    const cited = new Set((entry.cited || []).map(String));
    const extra = (entry.support || []).map(String).filter((id) => !cited.has(id));
    if (entry.status === "supported" && extra.length) {
      inserts.push([end, MARK_ADDED]);
      added.push(extra);
    }
  }
  inserts.sort((a, b) => a[0] - b[0]);  // stable: a close before the next open at one offset
  let source = "";
  let last = 0;
  for (const [at, mark] of inserts) {
    source += chars.slice(last, at).join("") + mark;
    last = at;
  }
  return { source: source + chars.slice(last).join(""), flags, added };
}

function textNodes(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
  return nodes;
}

function renderAnswer(target, text, pattern, grounding) {
  const { source, flags, added } = annotate(text, grounding);
  target.replaceChildren(answerFragment(source, null, pattern, flags, added));
}

function answerFragment(source, tokens, pattern, flags, added) {
  // Markdown (the source, or tokens marked's lexer made of it) → sanitised nodes, with
  // citation chips and grounding marks
  let fragment;
  if (window.marked && window.DOMPurify) {
    const html = tokens ? window.marked.parser(tokens, MARKED) : window.marked.parse(source, MARKED);
    fragment = window.DOMPurify.sanitize(html, PURIFY);
  } else {  // the vendored files failed to load: plain text, still safe
    fragment = document.createDocumentFragment();
    fragment.append(document.createTextNode(source));
  }
  for (const a of fragment.querySelectorAll("a")) {
    a.target = "_blank";
    a.rel = "noopener noreferrer";
  }
  let open = -1, flagIndex = 0, addedIndex = 0;
  for (const node of textNodes(fragment)) {
    const inCode = node.parentElement && node.parentElement.closest("code, pre");
    const value = node.nodeValue;
    const pieces = [];
    let buffer = "";
    const flush = () => {
      if (!buffer) return;
      const holder = open >= 0 ? el("span", "unsupported") : document.createDocumentFragment();
      if (open >= 0) {
        holder.title = flags[open] || "";
        holder.dataset.flag = String(open);  // one sentence may span several elements
        holder.tabIndex = 0;
        holder.setAttribute("aria-description", "Not supported by the references: " + (flags[open] || ""));
      }
      let last = 0;
      let chip = null;  // the id of the chip just put, with only spaces since
      pattern.lastIndex = 0;
      if (!inCode) {
        for (let m = pattern.exec(buffer); m !== null; m = pattern.exec(buffer)) {
          const between = buffer.slice(last, m.index);
          if (chip === m[1] && !between.trim()) {  // "#ref:1 #ref:1": one chip per reference
            last = m.index + m[0].length;
            continue;
          }
          if (m.index > last) holder.append(document.createTextNode(between));
          holder.append(citeButton(m[1], false));
          chip = m[1];
          last = m.index + m[0].length;
        }
      }
      if (last < buffer.length) holder.append(document.createTextNode(buffer.slice(last)));
      pieces.push(holder);
      buffer = "";
    };
    for (const ch of value) {
      if (ch === MARK_OPEN) { flush(); open = flagIndex++; }
      else if (ch === MARK_CLOSE) { flush(); open = -1; }
      else if (ch === MARK_ADDED) {
        flush();
        for (const id of added[addedIndex++] || []) pieces.push(citeButton(id, true));
      } else buffer += ch;
    }
    flush();
    node.replaceWith(...pieces);
  }
  return fragment;
}

// --- the answer while it streams: each finished block is rendered once ----------------
//
// Rendering the whole answer again on every text event is quadratic (a 44 KB answer in
// 1,000 pieces held the main thread ~6 s). marked's lexer cuts the answer into blocks; a
// block is final once two later blocks have begun (Markdown decides blocks line by line,
// but the last block is still growing and the one before it may still change with it:
// "1. a", blank, "2" that becomes "2. b" joins the list). Final blocks are parsed,
// sanitised and decorated once; only the open tail is redone: on each event while it is
// short, else when it has grown by a quarter, else at the next frame. When the answer is
// complete it is rendered whole once (a link definition or raw HTML reaches across blocks).

const MARKED = { async: false, gfm: true };
const OPEN_BLOCKS = 2;
const TAIL_EACH_EVENT = 1024;  // characters of open tail redone on every event

function streamAnswer(view, pattern) {
  let s = view.stream;
  if (!s) {
    s = view.stream = { seen: 0, src: "", cr: false, done: 0, rendered: 0, tail: [], frame: 0 };
    view.answer.replaceChildren();
  }
  // what marked's lexer reads: CR LF and CR as LF (a CR at the end may be half a CR LF),
  // private-use characters as U+FFFD (as annotate makes them)
  let piece = (s.cr ? "\r" : "") + view.text.slice(s.seen);
  s.seen = view.text.length;
  s.cr = piece.endsWith("\r");
  if (s.cr) piece = piece.slice(0, -1);
  s.src += piece.replace(/\r\n?/g, "\n").replace(PRIVATE, "\uFFFD");
  const open = s.src.length - s.done;
  if (open <= TAIL_EACH_EVENT || open >= s.rendered * 1.25) renderStream(view, pattern);
  else if (!s.frame) {
    s.frame = requestAnimationFrame(() => {
      s.frame = 0;
      if (view.stream === s) renderStream(view, pattern);
    });
  }
}

function renderStream(view, pattern) {
  const s = view.stream;
  if (s.frame) { cancelAnimationFrame(s.frame); s.frame = 0; }
  if (!(window.marked && window.DOMPurify)) {  // plain text: nothing to parse
    renderAnswer(view.answer, view.text, pattern, null);
    return;
  }
  const tail = s.src.slice(s.done) + (s.cr ? "\n" : "");
  const tokens = window.marked.lexer(tail, MARKED);
  let cut = tokens.length;
  for (let kept = 0; cut > 0 && kept < OPEN_BLOCKS;) if (tokens[--cut].type !== "space") kept++;
  let raw = tokens.slice(0, cut).map((t) => t.raw).join("");
  if (!tail.startsWith(raw)) { cut = 0; raw = ""; }  // not a clean cut: keep it all open
  for (const node of s.tail) node.remove();
  if (cut > 0) {
    const finished = tokens.slice(0, cut);
    finished.links = tokens.links;
    view.answer.append(answerFragment(null, finished, pattern, [], []));
    s.done += raw.length;
  }
  const rest = tokens.slice(cut);
  rest.links = tokens.links;
  const fragment = answerFragment(null, rest, pattern, [], []);
  s.tail = Array.from(fragment.childNodes);
  view.answer.append(fragment);
  s.rendered = tail.length - raw.length;
}

function wholeAnswer(view, pattern) {
  if (view.stream && view.stream.frame) cancelAnimationFrame(view.stream.frame);
  view.stream = null;
  renderAnswer(view.answer, view.text, pattern, view.grounding);
}

function plainTitle(title) {
  // A title is shown as text: its inline Markdown ("**Moneymaker**", `code`, [a](url))
  // is taken out rather than shown raw
  return String(title || "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(/(\*|_)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/^#+\s+/, "")
    .trim();
}

function openReference(id, opener) {
  const ref = state.references.get(id);
  $("panel-title").textContent = `Reference ${id}`;
  $("ref-title").textContent = ref ? plainTitle(ref.title) || "(untitled)" : "(not in this answer's references)";
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
  const fields = ref ? recordFields(ref.data) : [];
  const box = $("ref-content");
  box.replaceChildren();
  if (fields.length) {  // a database row: its fields, one per line
    const list = el("dl", "fields");
    for (const [name, value] of fields) list.append(el("dt", null, name), el("dd", null, value));
    box.append(list);
  } else {
    box.textContent = content || "(the content arrives when the answer is complete)";
  }
  const panel = $("panel");
  panel.hidden = false;
  panel.dataset.opener = opener && opener.dataset ? opener.dataset.citation || "" : "";
  state.opener = opener || null;
  panel.focus();
}

function recordFields(data) {
  // [name, value] of a database row's fields (internal "__" ones left out), as text
  if (!data || typeof data !== "object" || Array.isArray(data)) return [];
  const out = [];
  for (const [name, value] of Object.entries(data)) {
    if (name.startsWith("__") || value === null || value === undefined) continue;
    out.push([name, typeof value === "object" ? JSON.stringify(value) : String(value)]);
  }
  return out;
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

function following() {
  // is the conversation scrolled to its end (so the growing answer should stay in view)?
  const log = $("log");
  return log.scrollHeight - log.scrollTop - log.clientHeight < 48;
}

function showNewest(view) {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
  view.answer.scrollIntoView({ block: "end" });
}

function newTurn(question) {
  const examples = $("examples");
  if (examples) examples.remove();
  const turn = el("li", "turn");
  turn.append(el("p", "question", question));
  const searches = el("ul", "searches");
  searches.setAttribute("aria-label", "Searches");
  const answer = el("div", "answer");
  answer.setAttribute("aria-live", "polite");
  turn.append(searches, answer);
  $("log").append(turn);
  turn.scrollIntoView({ block: "end" });
  return { turn, searches, answer, rows: new Map(), counts: new Map(), text: "", grounding: null,
           stream: null };
}

function list(values) {
  return (Array.isArray(values) ? values : []).map((v) => `“${v}”`).join(", ");
}

const RESEARCH_EVENTS = {
  research_plan: (e) => `Research plan (${e.planner || "builtin"}): ${list(e.parts) || "the question as a whole"}`,
  research_round: (e) => {
    const searches = Array.isArray(e.searches) ? e.searches.length : 0;
    const gaps = Array.isArray(e.gaps) && e.gaps.length ? `; still open: ${list(e.gaps)}` : "";
    return `Round ${e.round}: ${searches} search${searches === 1 ? "" : "es"}, ` +
      `${e.new_references} new reference${e.new_references === 1 ? "" : "s"}; ` +
      `covered: ${list(e.covered) || "nothing yet"}${gaps}`;
  },
  research_gap: (e) => `Gap in round ${e.round}: “${e.part}” → searching ${list(e.queries)}`,
  research_done: (e) => `Research done (${String(e.stopped).replace(/_/g, " ")}): ${e.covered} of ${e.parts} parts covered`,
};

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
  } else if (Object.hasOwn(RESEARCH_EVENTS, name)) {
    // research mode: its plan, each round, each gap it searches, why it stopped
    view.searches.append(el("li", "search research", RESEARCH_EVENTS[name](event)));
  } else if (name === "notice") {
    // set-up news ("web search is off: set …"), not a failure: said once per page
    if (!state.notices.has(event.kind)) {
      state.notices.add(event.kind);
      view.searches.append(el("li", "search notice", event.text));
    }
  } else if (name === "text") {
    const follow = following();
    view.text += event.text;
    streamAnswer(view, pattern);
    if (follow) showNewest(view);
  } else if (name === "grounding") {
    const follow = following();
    view.grounding = Array.isArray(event.grounding) ? event.grounding : null;
    wholeAnswer(view, pattern);
    if (follow) showNewest(view);
  } else if (name === "done") {
    if (view.stream) wholeAnswer(view, pattern);
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
  const research = $("research").checked;
  const view = newTurn(question);
  state.busy = true;
  $("send").disabled = true;
  setStatus(research ? "Researching…" : "Searching…");
  try {
    const response = await fetch(`/v1/assistants/${encodeURIComponent(assistant)}/stream`, {
      method: "POST", headers: headers(),
      body: JSON.stringify({ messages: [...state.history, { role: "user", content: question }],
                             ...(research ? { research: true } : {}) }),
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
    state.history = [...state.history, { role: "user", content: question },
                     { role: "assistant", content: view.text }].slice(-MAX_HISTORY);
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
  $("assistant").addEventListener("change", () => {
    if (!state.busy) setStatus("");  // what it said was about the other assistant
    describeAssistant();
  });
  $("question").addEventListener("input", () => {
    // "Done." or "Type a question first" from before is stale once the user types
    if (!state.busy) setStatus("");
  });
  $("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const question = $("question").value.trim();
    if (state.busy) return;
    if (!question) {  // only spaces: say so rather than do nothing
      setStatus("Type a question first: the box is empty or holds only spaces.");
      $("question").focus();
      return;
    }
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
