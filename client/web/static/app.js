// harness web: the page's few behaviours, plain JavaScript, no build step.
// Every text from the model or the repository goes into the page through
// textContent (never innerHTML), so nothing it says can run: Markdown is
// turned into elements here, by hand.
"use strict";

const $ = (id) => document.getElementById(id);
const STORE = "harness-web-answers"; // approvals pressed, not yet known to have counted

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
    credentials: "same-origin",
  });
  let answer = {};
  try { answer = await response.json(); } catch (e) { answer = {}; }
  return { ok: response.ok, status: response.status, answer };
}

function cost(value) {
  return typeof value === "number" ? "$" + value.toFixed(4) : "-";
}

const STATES = { idle: "idle", running: "running", waiting: "waiting for you" };

// ---- Markdown, as elements ------------------------------------------------
function inline(parent, text) {
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*\s][^*]*\*)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
    const token = match[0];
    if (token.startsWith("`")) parent.appendChild(el("code", "", token.slice(1, -1)));
    else if (token.startsWith("**")) parent.appendChild(el("strong", "", token.slice(2, -2)));
    else parent.appendChild(el("em", "", token.slice(1, -1)));
    last = match.index + token.length;
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

function markdown(text) {
  const box = el("div", "md");
  let list = null, para = null, code = null;
  for (const line of text.split("\n")) {
    if (code) {
      if (line.trimStart().startsWith("```")) { code = null; continue; }
      code.textContent += line + "\n";
      continue;
    }
    if (line.trimStart().startsWith("```")) {
      const pre = el("pre", "code");
      code = el("code");
      pre.appendChild(code);
      box.appendChild(pre);
      list = para = null;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (heading) {
      const h = el("h" + Math.min(6, heading[1].length + 2));
      inline(h, heading[2]);
      box.appendChild(h);
      list = para = null;
    } else if (item) {
      if (!list) { list = el("ul"); box.appendChild(list); }
      const li = el("li");
      inline(li, item[1]);
      list.appendChild(li);
      para = null;
    } else if (!line.trim()) {
      list = para = null;
    } else {
      if (!para) { para = el("p"); box.appendChild(para); } else para.appendChild(document.createTextNode(" "));
      inline(para, line);
      list = null;
    }
  }
  return box;
}

function diffBlock(text) {
  const pre = el("pre", "diff");
  for (const line of String(text || "").split("\n")) {
    let cls = "";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "file";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    else if (line.startsWith("@@")) cls = "hunk";
    pre.appendChild(el("span", cls, line + "\n"));
  }
  return pre;
}

// ---- the sessions page ------------------------------------------------------
function sessionsPage() {
  const list = $("sessions");
  async function refresh() {
    try {
      const response = await fetch("/api/sessions", { credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      const { sessions } = await response.json();
      list.replaceChildren(...sessions.map((s) => {
        const li = el("li", "session state-" + s.state);
        li.dataset.session = s.session;
        const a = el("a");
        a.href = "/s/" + encodeURIComponent(s.session);
        a.appendChild(el("span", "title", s.title || "(no task yet)"));
        li.append(a, el("span", "folder", s.cwd), el("span", "state", STATES[s.state] || s.state),
          el("span", "cost", cost(s.cost_usd)));
        return li;
      }));
      $("link").textContent = "live";
    } catch (e) {
      $("link").textContent = "offline: retrying";
    }
  }
  setInterval(refresh, 3000);
}

// ---- one session ------------------------------------------------------------
function sessionPage() {
  const session = document.body.dataset.session;
  const api = (what) => "/api/s/" + encodeURIComponent(session) + "/" + what;
  const stream = $("stream");
  let lastSeq = 0, socket = null, backoff = 250, text = null, textBuffer = "", reasoning = null;
  const cards = new Map();
  let lastDiff = null; // the diff just shown: an approval of the same change replaces it
  const sending = new Set(); // answers on their way: never two requests for one at once

  const say = (message) => { $("said").textContent = message; };
  const line = (cls, message) => { const p = el("p", "line " + cls, message); stream.appendChild(p); return p; };
  const follow = () => { if (window.innerHeight + window.scrollY >= document.body.scrollHeight - 120) window.scrollTo(0, document.body.scrollHeight); };
  const endText = () => { text = null; textBuffer = ""; reasoning = null; };

  function answered(request, message) {
    const card = cards.get(request);
    if (card) { card.classList.add("answered"); card.querySelector(".outcome").textContent = message; }
  }

  function approvalCard(data) {
    if (cards.has(data.request)) return;
    const card = el("section", "approval");
    card.dataset.request = data.request;
    card.appendChild(el("h3", "", data.kind === "command" ? "Run this command?" : "Apply this edit to " + (data.path || "") + "?"));
    if (data.summary) card.appendChild(el("p", "summary", data.summary));
    if (data.diff) card.appendChild(diffBlock(data.diff));
    const reason = el("input", "reason");
    reason.placeholder = "reason (for skip)";
    reason.maxLength = 2000;
    const buttons = el("div", "buttons");
    const choices = [["yes", "Yes"], ["no", "No"], ["skip", "Skip"]];
    if (data.allow) choices.push(["always", "Always: " + data.allow]);
    for (const [decision, label] of choices) {
      const button = el("button", "answer " + decision, label);
      button.type = "button";
      button.dataset.decision = decision;
      button.addEventListener("click", () => answer(data.request, decision, reason.value));
      buttons.appendChild(button);
    }
    card.append(buttons, reason, el("p", "outcome"));
    cards.set(data.request, card);
    $("approvals").appendChild(card);
    follow();
  }

  function pending() { try { return JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (e) { return {}; } }
  function keep(all) { localStorage.setItem(STORE, JSON.stringify(all)); }

  function answer(request, decision, reason) {
    const all = pending();
    if (all[request]) return; // pressed already: one answer per question
    all[request] = { session, decision, reason };
    keep(all);
    const card = cards.get(request);
    if (card) card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    answered(request, "sending " + decision + "…");
    sendAnswers();
  }

  async function sendAnswers() {
    const all = pending();
    for (const [request, wanted] of Object.entries(all)) {
      if (wanted.session !== session || sending.has(request)) continue;
      let result;
      sending.add(request);
      try { result = await post(api("approve"), { request, decision: wanted.decision, reason: wanted.reason }); }
      catch (e) { answered(request, "offline: " + wanted.decision + " will be sent when the link is back"); continue; }
      finally { sending.delete(request); }
      if (result.status >= 500) { answered(request, "not sent yet (" + (result.answer.error || result.status) + "); retrying"); continue; }
      const now = pending();
      delete now[request];
      keep(now);
      const outcome = result.answer;
      if (outcome.counted) answered(request, "counted: " + outcome.decision);
      else answered(request, "not counted: " + (outcome.message || outcome.error || "refused"));
    }
  }

  function show(event) {
    const data = event.data || {};
    switch (event.kind) {
      case "turn.started":
        endText(); lastDiff = null;
        if ($("title").textContent === "(no task yet)") $("title").textContent = String(data.text || "").split("\n")[0].slice(0, 60); stream.appendChild(el("p", "you", data.text || "")); setState("running"); break;
      case "text.delta":
        if (!text) { text = el("div", "reply"); stream.appendChild(text); }
        textBuffer += data.text || "";
        text.replaceChildren(markdown(textBuffer));
        break;
      case "reasoning.delta":
        if (!reasoning) { reasoning = el("p", "line reasoning", ""); stream.appendChild(reasoning); }
        reasoning.textContent += data.text || "";
        break;
      case "tool.call": endText(); line("tool", "→ " + data.name + " " + String(data.arguments || "").slice(0, 200)); break;
      case "tool.result": line("result", String(data.result || "").split("\n")[0].slice(0, 200)); break;
      case "diff": endText(); lastDiff = { text: data.diff, node: diffBlock(data.diff) }; stream.appendChild(lastDiff.node); break;
      case "approval.requested":
        if (lastDiff && data.diff && lastDiff.text === data.diff) lastDiff.node.remove();
        lastDiff = null;
        approvalCard(data);
        setState("waiting");
        break;
      case "approval.resolved": {
        const who = (data.by && data.by.name) || data.client || "the daemon";
        answered(data.request, "answered " + data.decision + " by " + who);
        const card = cards.get(data.request);
        if (card) card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        setState("running");
        break;
      }
      case "check.started": line("check", "check: " + (data.command || "make check") + "…"); break;
      case "check.result":
        line(data.passed ? "check passed" : "check failed", data.passed ? "check passed" : "check failed (exit " + data.exit_code + ")");
        if (!data.passed && data.output) stream.appendChild(el("pre", "output", data.output));
        break;
      case "notice": line("notice", data.message || ""); break;
      case "error": line("error", data.message || ""); break;
      case "usage": if (typeof data.session_cost_usd === "number") $("cost").textContent = cost(data.session_cost_usd); break;
      case "mode.changed": $("mode").value = data.mode; line("notice", "mode: " + data.mode); break;
      case "undo": line("notice", "undone: " + (data.restored || []).join(", ")); break;
      case "turn.finished":
        endText();
        line(data.exit_code === 0 ? "done" : "failed", "turn finished (exit " + data.exit_code + ")");
        setState("idle");
        break;
      default: return;
    }
    follow();
  }

  function setState(state) { $("state").textContent = STATES[state] || state; }
  function setLink(message) { $("link").textContent = message; }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/s/" + encodeURIComponent(session) + "/events?since=" + lastSeq);
    socket.addEventListener("message", (message) => {
      const frame = JSON.parse(message.data);
      if (frame.type === "event") {
        if (frame.seq <= lastSeq) return;
        lastSeq = frame.seq;
        document.body.dataset.seq = String(lastSeq);
        show(frame);
      } else if (frame.type === "attached") {
        backoff = 250;
        setLink("live");
        setState(frame.session.state);
        if (frame.session.title) { $("title").textContent = frame.session.title; document.title = "harness: " + frame.session.title; }
        $("cost").textContent = cost(frame.session.cost_usd);
        $("mode").value = frame.session.mode;
        sendAnswers();
      } else if (frame.type === "link") {
        setLink(frame.state === "live" ? "live" : "daemon restarting…");
        if (frame.state === "live") sendAnswers();
      } else if (frame.type === "gone") {
        setLink("gone: " + frame.message);
      }
    });
    socket.addEventListener("close", (closed) => {
      if (closed.code === 4404) return;
      setLink("offline: reconnecting");
      setTimeout(connect, backoff);
      backoff = Math.min(5000, backoff * 2);
    });
  }

  async function act(what, body) {
    try {
      const result = await post(api(what), body);
      say(result.ok ? describe(what, result.answer) : (result.answer.error || "refused (" + result.status + ")"));
      return result.ok;
    } catch (e) { say("offline: not sent"); return false; }
  }
  function describe(what, answer) {
    if (what === "submit") return answer.queued ? "queued behind the running turn" : "sent";
    if (what === "cancel") return answer.cancelled ? "cancelled" : "nothing was running";
    if (what === "undo") return "put back: " + ((answer.restored || []).join(", ") || "nothing");
    if (what === "mode") return "mode: " + answer.mode;
    return "done";
  }

  $("task").addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const box = $("text");
    if (await act("submit", { text: box.value })) box.value = "";
  });
  $("cancel").addEventListener("click", () => act("cancel"));
  $("undo").addEventListener("click", () => act("undo"));
  $("mode").addEventListener("change", () => act("mode", { mode: $("mode").value }));
  window.addEventListener("online", sendAnswers);
  setInterval(() => { if (Object.keys(pending()).length) sendAnswers(); }, 3000);
  connect();
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  if (page === "sessions") sessionsPage();
  else if (page === "session") sessionPage();
});
