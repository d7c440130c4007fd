// The chat page's upload control: files sent to POST /v1/kb/{collection}/files. Loaded
// after app.js (same global scope: $, el, state, apiKey, askForKey come from there).
// What the server answers (reports, reasons) is set with textContent only.
"use strict";

// --- uploads: files sent to POST /v1/kb/{collection}/files ------------------------------
//
// The collections offered are the assistant's own (the ones its answers search); any
// other name the server accepts is the caller's to write to (its key owns what it adds).
// XMLHttpRequest, not fetch: only it reports the upload's progress.

function offerCollections(model) {
  const names = model && Array.isArray(model.kb_collections)
    ? model.kb_collections.filter((n) => typeof n === "string") : [];
  const list = $("upload-collections");
  list.replaceChildren(...names.map((name) => {
    const option = el("option");
    option.value = name;
    return option;
  }));
  if (names.length && !names.includes($("upload-collection").value)) {
    $("upload-collection").value = names[0];
  }
}

function uploadStatus(text, failed) {
  const status = $("upload-status");
  status.textContent = text;
  status.classList.toggle("error", Boolean(failed));
}

function counted(n, noun) { return `${n} ${noun}${n === 1 ? "" : "s"}`; }

function describeReport(report) {
  // the counts after the colon are chunks (a document is cut into several)
  const parts = [`${counted(report.documents || 0, "document")} in ${report.collection}: ` +
                 `chunks added ${report.added || 0}, updated ${report.updated || 0}, ` +
                 `unchanged ${report.unchanged || 0}`];
  for (const item of report.skipped || []) {
    parts.push(`skipped ${item.source}: ${item.reason}`);
  }
  return parts.join("; ");
}

function uploadEvents(text) {
  // complete server-sent events of the text so far: [{event, data}], data parsed JSON
  const events = [];
  for (const frame of text.split("\n\n").slice(0, -1)) {
    let event = "message";
    const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (!data.length) continue;
    try { events.push({ event, data: JSON.parse(data.join("\n")) }); } catch (_) { /* partial */ }
  }
  return events;
}

function upload() {
  const files = $("upload-files").files;
  const collection = $("upload-collection").value.trim();
  if (!files.length || !collection || state.uploading) return;
  const form = new FormData();
  for (const file of files) form.append("file", file, file.name);
  const request = new XMLHttpRequest();
  const bar = $("upload-progress");
  state.uploading = true;
  $("upload-send").disabled = true;
  bar.hidden = false;
  bar.value = 0;
  uploadStatus(`Sending ${files.length} file(s)…`);
  request.upload.addEventListener("progress", (e) => {
    if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total);
  });
  request.upload.addEventListener("load", () => {
    bar.removeAttribute("value");  // indeterminate until the server reports its progress
    uploadStatus("Sent; the server is reading the files…");
  });
  // ?progress=true: the answer is server-sent events, "progress" while indexing, then
  // "report" or "error"; responseText grows as they come
  request.addEventListener("progress", () => {
    const events = uploadEvents(request.responseText).filter((e) => e.event === "progress");
    const last = events[events.length - 1];
    if (!last || !(last.data.total > 0)) return;
    bar.value = Math.round((100 * last.data.done) / last.data.total);
    uploadStatus(`Indexing: ${Math.round(last.data.done / 1024)} of ` +
                 `${Math.round(last.data.total / 1024)} KB…`);
  });
  const done = (text, failed) => {
    state.uploading = false;
    $("upload-send").disabled = false;
    bar.hidden = true;
    uploadStatus(text, failed);
  };
  request.addEventListener("load", () => {
    if (request.status === 200) {
      const events = uploadEvents(request.responseText);
      const report = events.find((e) => e.event === "report");
      const error = events.find((e) => e.event === "error");
      if (report) {
        $("upload-files").value = "";
        const body = report.data;
        done(describeReport(body), (body.skipped || []).length > 0 && !body.documents);
      } else {
        const message = error && error.data.error && error.data.error.message;
        done(`Upload failed: ${message || "the server ended the answer early"}`, true);
      }
      return;
    }
    let body = null;
    try { body = JSON.parse(request.responseText); } catch (_) { body = null; }
    if (request.status === 401) {
      done("This server needs an API key.", true);
      askForKey("This server needs an API key.");
    } else {
      const message = body && body.error && body.error.message;
      done(`Upload refused (${request.status}): ${message || request.statusText}`, true);
    }
  });
  request.addEventListener("error", () => done("The server cannot be reached.", true));
  request.open("POST", `/v1/kb/${encodeURIComponent(collection)}/files?progress=true`);
  const key = apiKey();
  if (key) request.setRequestHeader("Authorization", "Bearer " + key);
  request.send(form);
}

document.addEventListener("DOMContentLoaded", () => {
  $("upload-form").addEventListener("submit", (e) => {
    e.preventDefault();
    upload();
  });
});
