// footprint_lab Lab widget: the front end of footprint_lab.lab.widget.Lab (an anywidget ES module).
//
// Rule kept here: the browser holds no logic an explanation needs. It draws the state the
// kernel syncs (status, live steps, question, refusal card, answer view, tree, detail panel,
// the chat's turns) and sends back what the analyst did ({do: ...} messages). It draws in one
// place: render() redraws, from the whole state, each part whose traits changed, every time
// the kernel moves state_version, so the order in which traits arrive never matters. Text from a run is written with
// textContent; HTML fields arrive already escaped by the kernel's views. What a click names
// is read from the clicked element's dataset only, and found again by comparing datasets:
// no selector or markup is ever built from a value.

const CLICKABLE = "[data-fl-action],[data-fl-piece],[data-fl-call],[data-fl-answer],[data-fl-member]";
const STATUS_TEXT = {
  idle: "ready", running: "running…", finished: "finished", paused: "waiting on you", failed: "failed",
  cancelled: "cancelled", refused: "refused", abandoned: "question dropped",
};

function node(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") element.textContent = value;
    else if (key === "cls") element.className = value;
    else element.setAttribute(key, value);
  }
  for (const child of children) if (child) element.append(child);
  return element;
}

function svg(tag, attrs = {}) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) element.setAttribute(key, value);
  return element;
}

// The run tree as an indented diagram: one row per member run, depth first, elbows to the parent.
function drawTree(holder, tree, selected) {
  holder.replaceChildren();
  const nodes = (tree && tree.nodes) || [];
  if (nodes.length < 2) return;
  const rowHeight = 30, indent = 26, width = 560;
  const picture = svg("svg", {
    width: String(width), height: String(nodes.length * rowHeight + 6), class: "fl-tree-svg", role: "tree",
  });
  const rowOf = new Map(nodes.map((n, i) => [n.path, i]));
  nodes.forEach((n, i) => {
    const x = 8 + n.depth * indent, y = 4 + i * rowHeight;
    if (n.parent !== null && rowOf.has(n.parent)) {
      const p = rowOf.get(n.parent), px = 8 + (n.depth - 1) * indent + 8;
      picture.append(svg("path", { d: `M${px},${4 + p * rowHeight + 22} V${y + 11} H${x}`, class: "fl-tree-edge" }));
    }
    const group = svg("g", { "data-fl-member": n.path, class: `fl-tree-node fl-st-${n.status}` + (n.path === selected ? " fl-selected" : ""), role: "treeitem", tabindex: "0" });
    const label = `${n.label}`;
    const box = svg("rect", { x: String(x), y: String(y), rx: "5", height: "22", width: String(Math.min(width - x - 4, 12 + label.length * 7.2 + 90)) });
    const title = svg("title");
    // the node's name and kind, what its kind means, and the start of its answer
    title.textContent = [n.label, n.kind, n.preview].filter(Boolean).join("\n");
    const text = svg("text", { x: String(x + 8), y: String(y + 15) });
    text.textContent = label;
    const meta = svg("text", { x: String(x + 14 + label.length * 7.2), y: String(y + 15), class: "fl-tree-meta" });
    meta.textContent = `${n.status}${n.edge ? " · " + n.edge : ""}`;
    group.append(title, box, text, meta);
    picture.append(group);
  });
  holder.append(node("div", { cls: "fl-section-title", text: "Run tree (click a member to see its answer)" }), picture);
}

function drawSteps(list, steps, hidden) {
  list.replaceChildren();
  if (hidden > 0) list.append(node("li", { cls: "fl-step fl-step-more", text: `… ${hidden} earlier steps (lab.run.steps has them all)` }));
  for (const step of steps) {
    const row = node("li", { cls: `fl-step fl-step-${step.kind} fl-st-${step.status}`, "data-fl-step": step.id },
      node("span", { cls: "fl-step-dot" }),
      node("code", { cls: "fl-step-id", text: step.id }),
      node("span", { cls: "fl-step-label", text: step.label || "" }),
      step.ms !== undefined ? node("span", { cls: "fl-step-ms", text: `${step.ms} ms` }) : null);
    if (step.detail) row.append(node("div", { cls: "fl-step-detail", text: step.detail }));
    list.append(row);
  }
  requestAnimationFrame(() => { list.scrollTop = list.scrollHeight; });
}

// The Ask box: a question to the explainer about the latest run, its answer (kernel-drawn, escaped)
// and the ids it cites; drawn by render() like every other part. A cited chip asks the kernel to open what it names ({do: "cite"}) and
// outlines the same id where the answer view shows it.
function askBox(model, send, answer) {
  const box = node("div", { cls: "fl-ask" });
  const question = node("input", { type: "text", cls: "fl-ask-question", placeholder: "Ask the run why… (e.g. Why was the refund approved?)", "aria-label": "question" });
  const askButton = node("button", { cls: "fl-btn fl-ask-btn", text: "Ask" });
  const state = node("span", { cls: "fl-ask-state" });
  const hint = node("div", { cls: "fl-ask-hint" });
  const shown = node("div", { cls: "fl-ask-result" });
  box.append(node("div", { cls: "fl-ask-row" }, question, askButton, state), hint, shown);
  // the question travels in the message; the kernel keeps it in ask_question, shown back in the box
  const pressAsk = () => send({ do: "ask", question: question.value });
  askButton.addEventListener("click", pressAsk);
  question.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    event.stopPropagation();
    pressAsk();
  });
  shown.addEventListener("click", (event) => {
    const chip = event.target.closest("[data-fl-cite]");
    if (!chip || !shown.contains(chip)) return;
    event.preventDefault();
    event.stopPropagation();
    const id = chip.dataset.flCite;
    send({ do: "cite", id });
    for (const found of answer.querySelectorAll("[data-fl-piece],[data-fl-call]")) {
      if (found.dataset.flPiece !== id && found.dataset.flCall !== id) continue;
      found.classList.add("fl-ask-lit");
      setTimeout(() => found.classList.remove("fl-ask-lit"), 2500);
    }
  });
  const draw = () => {
    const asking = model.get("ask_state") === "asking";
    const blocked = model.get("status") === "running" || Boolean(model.get("busy"));
    askButton.disabled = blocked || Boolean(model.get("ask_hint"));
    state.textContent = asking ? "asking…" : "";
    hint.textContent = model.get("ask_hint");
    if (document.activeElement !== question && question.value !== model.get("ask_question")) question.value = model.get("ask_question");
    shown.innerHTML = model.get("ask_html");
  };
  return [box, draw];
}

// The chat's turns: one row each (as recorded, written as text), with what the kernel offers on a turn:
// open it, rerun it without one of the agent's sources, or fork the chat before it.
function drawTurns(holder, turns, sources, selection, send) {
  holder.replaceChildren();
  if (!turns.length) return;
  holder.append(node("div", { cls: "fl-section-title", text: `Turns (${turns.length})` }));
  for (const row of turns) {
    const open = node("button", { cls: "fl-btn fl-turn-open", text: "Open" });
    open.addEventListener("click", () => send({ do: "turn", action: "open", turn: row.turn }));
    const fork = node("button", { cls: "fl-btn fl-turn-fork", text: "Fork here", title: "A new chat with the turns before this one" });
    fork.addEventListener("click", () => send({ do: "turn", action: "fork", turn: row.turn }));
    // nothing is chosen for the analyst: the list starts on a prompt, and Rerun waits for a source
    const pick = node("select", { cls: "fl-turn-source", "aria-label": `source to leave out of turn ${row.turn}` });
    pick.append(node("option", { value: "", text: "choose a source…" }));
    for (const source of sources) pick.append(node("option", { value: source, text: source }));
    const rerun = node("button", { cls: "fl-btn fl-turn-rerun", text: "Rerun without", title: "Run this turn again without the chosen source" });
    rerun.disabled = true;
    pick.addEventListener("change", () => { rerun.disabled = !pick.value; });
    rerun.addEventListener("click", () => send({ do: "turn", action: "rerun", turn: row.turn, source: pick.value }));
    const compare = node("button", { cls: "fl-btn fl-turn-compare", text: "Compare", title: "What this turn was given against the run shown, piece by piece" });
    compare.addEventListener("click", () => send({ do: "turn", action: "compare", turn: row.turn }));
    compare.disabled = row.turn === turns.length - 1 && !(selection && selection.turn !== undefined && selection.turn !== row.turn);
    const chosen = selection && selection.turn === row.turn;
    holder.append(node("div", { cls: `fl-turn-row fl-st-${row.status}` + (chosen ? " fl-selected" : ""), "data-fl-turn": String(row.turn) },
      node("code", { cls: "fl-turn-k", text: `turn ${row.turn}` }),
      node("span", { cls: "fl-turn-status", text: row.status }),
      node("span", { cls: "fl-turn-message", text: row.message }),
      node("span", { cls: "fl-turn-answer", text: row.answer }),
      node("span", { cls: "fl-buttons" }, open, node("label", { cls: "fl-turn-pick" }, node("span", { text: "leave out " }), pick), rerun, fork, compare)));
  }
}

// Keyboard access to what the kernel's views make clickable: each such element that is not a control already
// joins the Tab order, says it is a button, and answers Enter / Space as a click (render()'s keydown listener).
function keyed(holder) {
  for (const found of holder.querySelectorAll(CLICKABLE)) {
    if (found.matches("button,a[href],input,select,textarea,summary")) continue;
    const opener = found.matches("details,section") ? found.querySelector(":scope > summary, :scope > h4") : null;
    if (opener && opener.tagName === "SUMMARY") continue;   // a summary is focusable, and opens it natively
    const target = opener || found;
    target.setAttribute("tabindex", "0");
    target.setAttribute("role", "button");
    target.setAttribute("data-fl-keyed", "");
  }
}

function render({ model, el }) {
  const send = (message) => model.send(message);
  // Keys typed in the widget are the analyst's, not notebook shortcuts (Lumino stops at this attribute).
  const root = node("div", { cls: "fl-lab", "data-lm-suppress-shortcuts": "true" });
  const title = node("span", { cls: "fl-title" });
  const turn = node("span", { cls: "fl-turn" });
  const status = node("span", { cls: "fl-status" });
  const message = node("textarea", { cls: "fl-message", rows: "2", placeholder: "Message to the agent…", "aria-label": "message" });
  const runButton = node("button", { cls: "fl-btn fl-run-btn", text: "Run", title: "Run (Shift+Enter in the box)" });
  const stopButton = node("button", { cls: "fl-btn fl-stop", text: "Stop" });
  const newButton = node("button", { cls: "fl-btn fl-new", text: "New conversation" });
  const identityFields = {};
  const identity = node("details", { cls: "fl-identity" }, node("summary", { text: "identity" }));
  for (const field of ["conversation_id", "tenant", "principal"]) {
    const input = node("input", { type: "text", cls: `fl-identity-${field}`, placeholder: field, "aria-label": field });
    input.addEventListener("change", () => {
      const value = { ...model.get("identity") };
      if (input.value.trim()) value[field] = input.value.trim(); else delete value[field];
      model.set("identity", value);
      model.save_changes();
    });
    identityFields[field] = input;
    identity.append(input);
  }
  const card = node("div", { cls: "fl-card-slot" });
  const note = node("div", { cls: "fl-lab-note" });
  const pause = node("div", { cls: "fl-pause" });
  const stepsBox = node("details", { cls: "fl-steps", open: "" });
  const stepsSummary = node("summary", { text: "steps" });
  const stepsList = node("ol", { cls: "fl-step-list" });
  stepsBox.append(stepsSummary, stepsList);
  const tree = node("div", { cls: "fl-lab-tree" });
  const member = node("div", { cls: "fl-lab-member" });
  const answer = node("div", { cls: "fl-answer-view" });
  const turnsBox = node("div", { cls: "fl-turns" });
  const progress = node("div", { cls: "fl-progress" });
  const panel = node("div", { cls: "fl-panel" });
  // a Lab of a run made elsewhere has nothing to run: its message box is not drawn
  const compose = node("div", { cls: "fl-compose" }, message, node("div", { cls: "fl-buttons" }, runButton, stopButton, newButton));
  // The answer first: what the run said and the piece opened from it sit right under the box; how it got
  // there (the steps, closed once it ends; the tree; the turns) and the Ask box follow.
  const [asking, drawAsk] = askBox(model, send, answer);
  root.append(
    node("div", { cls: "fl-head" }, title, turn, status),
    compose,
    identity, card, note, pause, progress, answer, panel, tree, member, turnsBox, stepsBox, asking,
  );
  el.append(root);

  const pressRun = () => {
    model.set("message", message.value);
    model.save_changes();
    send({ do: "run", message: message.value });
  };
  runButton.addEventListener("click", pressRun);
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.shiftKey) { event.preventDefault(); event.stopPropagation(); pressRun(); }
  });
  message.addEventListener("change", () => { model.set("message", message.value); model.save_changes(); });
  stopButton.addEventListener("click", () => send({ do: "stop" }));
  newButton.addEventListener("click", () => send({ do: "new" }));
  root.addEventListener("click", (event) => {
    const target = event.target.closest(CLICKABLE);
    if (!target || !root.contains(target) || target.closest(".fl-compose,.fl-pause")) return;
    if (target.tagName === "DETAILS" || target.tagName === "SECTION") {
      // A block of the answer view: only its own summary or heading is a click on it, and it still opens natively.
      const handle = event.target.closest("summary, h4");
      if (!handle || handle.parentElement !== target) return;
    } else if (event.target.closest("a[href]")) {
      return;
    } else {
      event.preventDefault();
    }
    const data = target.dataset;
    const within = target.closest("[data-fl-call]");
    // a replay with a piece's text edited: the text box of the same panel, as the analyst left it
    const box = data.flAction === "replay_edit" ? target.closest(".fl-replay")?.querySelector("textarea[data-fl-edit]") : null;
    send({
      do: "click", action: data.flAction ?? null, source: data.flSource ?? null, piece: data.flPiece ?? null,
      edit: box ? box.value : null,
      slot: data.flSlot ?? null, call: data.flCall ?? (within ? within.dataset.flCall : null),
      answer: data.flAnswer !== undefined, member: data.flMember ?? null,
      in_panel: Boolean(target.closest(".fl-panel")),
    });
  });
  root.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    const target = event.target;
    if (!target.matches || !target.matches(".fl-tree-node,[data-fl-keyed]")) return;
    event.preventDefault();
    event.stopPropagation();
    // a block of the answer view opens from its own heading, as a click there does
    const handle = target.matches("details,section") ? target.querySelector(":scope > summary, :scope > h4") : null;
    (handle || target).dispatchEvent(new MouseEvent("click", { bubbles: true }));
  });

  const drawPause = () => {
    pause.replaceChildren();
    const question = model.get("question") || {};
    if (!question.text) return;
    const box = node("input", { type: "text", cls: "fl-pause-answer", placeholder: "your answer", "aria-label": "answer" });
    const answerWith = (text) => send({ do: "answer", answer: text });
    const buttons = node("div", { cls: "fl-buttons" });
    // a choice answers by its place in the list: the kernel sends it the choice itself (its button shows it as drawn)
    (question.choices || []).forEach((choice, index) => {
      const button = node("button", { cls: "fl-btn fl-choice", text: choice });
      button.addEventListener("click", () => send({ do: "answer", answer: choice, choice: index }));
      buttons.append(button);
    });
    const submit = node("button", { cls: "fl-btn fl-pause-submit", text: "Answer" });
    submit.addEventListener("click", () => answerWith(box.value));
    box.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.stopPropagation(); answerWith(box.value); } });
    const abandon = node("button", { cls: "fl-btn fl-abandon", text: "Abandon" });
    abandon.addEventListener("click", () => send({ do: "abandon" }));
    pause.append(
      node("div", { cls: "fl-pause-head", text: `${question.tool ? "Tool " + question.tool + " asks" : "A question"}:` }),
      node("div", { cls: "fl-pause-question", text: question.text }),
      node("div", { cls: "fl-pause-row" }, box, buttons, submit, abandon),
    );
  };

  const drawProgress = () => {
    progress.replaceChildren();
    const p = model.get("progress") || {};
    const busy = model.get("busy");
    if (!busy) return;
    // no count yet (an Ask, the first rerun): the bar runs without a value, as a spinner would
    const bar = node("progress", p.total ? { max: String(p.total), value: String(p.done || 0) } : {});
    progress.append(node("span", { text: `${busy} ` }), bar, node("span", { text: p.total ? ` ${p.done}/${p.total}` : "" }));
  };

  const drawControls = () => {
    const state = model.get("status");
    const running = state === "running";
    const busy = Boolean(model.get("busy"));
    title.textContent = model.get("title");
    const turns = model.get("turn");
    turn.textContent = turns ? `${turns} turn${turns === 1 ? "" : "s"}` : "";  // a count: the turns below are numbered from 0
    // while reruns, a replay or a question run on a finished run, the badge says so, not "finished"
    const doing = busy && !running ? model.get("busy") : "";
    status.textContent = doing || STATUS_TEXT[state] || state;
    status.className = `fl-status fl-st-${doing ? "running" : state}`;
    root.dataset.status = state;
    runButton.disabled = running || busy;
    stopButton.disabled = !(running || busy);
    newButton.disabled = running || busy || !turns;
    runButton.textContent = model.get("follows") ? "Send" : "Run";
    runButton.title = model.get("follows") ? "Continue this conversation (Shift+Enter)" : "Run (Shift+Enter)";
  };
  const drawMessage = () => {
    if (document.activeElement !== message && message.value !== model.get("message")) message.value = model.get("message");
  };
  const drawIdentity = () => {
    const who = model.get("identity") || {};
    for (const [field, input] of Object.entries(identityFields)) if (document.activeElement !== input) input.value = who[field] || "";
  };
  const drawSteps_ = () => {
    const steps = model.get("steps") || [];
    stepsBox.open = model.get("status") === "running";
    drawSteps(stepsList, steps, model.get("steps_hidden"));
    stepsSummary.textContent = `steps (${steps.length + model.get("steps_hidden")})`;
  };
  // Each part of the widget and the traits it is drawn from; render() redraws a part when one of them changed.
  const parts = [
    [["status", "turn", "title", "busy", "follows"], drawControls],
    [["can_run"], () => { compose.style.display = model.get("can_run") ? "" : "none"; }],
    [["busy", "progress"], drawProgress],
    [["message"], drawMessage],
    [["identity"], drawIdentity],
    [["steps", "steps_hidden", "status"], drawSteps_],
    [["card"], () => { card.innerHTML = model.get("card"); }],
    [["note"], () => { note.textContent = model.get("note"); }],
    [["question"], drawPause],
    [["turns", "sources", "selection"], () => drawTurns(turnsBox, model.get("turns") || [], model.get("sources") || [], model.get("selection"), send)],
    [["tree", "member_path"], () => drawTree(tree, model.get("tree"), model.get("member_path"))],
    [["member_html"], () => { member.innerHTML = model.get("member_html"); keyed(member); }],
    [["answer_html"], () => { answer.innerHTML = model.get("answer_html"); keyed(answer); }],
    [["ask_state", "ask_hint", "ask_html", "ask_question", "status", "busy"], drawAsk],
    [["panel_html"], () => {
      panel.innerHTML = model.get("panel_html");
      keyed(panel);
      if (drawnVersion !== null && model.get("panel_html")) panel.scrollIntoView({ block: "nearest" });
    }],
  ];
  let drawnFrom = {};      // the value of each trait as last drawn
  let drawnVersion = null; // the first drawing restores a view; only later changes scroll to the panel
  const render = () => {
    const now = {};
    for (const [names] of parts) for (const name of names) now[name] = model.get(name);
    for (const [names, draw] of parts) {
      if (drawnVersion === null || names.some((name) => now[name] !== drawnFrom[name])) draw();
    }
    drawnFrom = now;
    drawnVersion = model.get("state_version");
    root.dataset.stateVersion = String(drawnVersion);
  };
  model.on("change:state_version", render);
  render();
  return () => root.remove();
}

export default { render };
