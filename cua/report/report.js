// The cua run report: an overview of a run (and a comparison with a second one) and a viewer
// per episode. It runs from file:// : data arrives as script files that call
// window.__cuaLoaded(id, payload), since a page opened from disk may not fetch files.
// Served by `cua report --serve`, it polls the data and redraws as the run goes on.
"use strict";
(() => {
  const cache = new Map();
  const waiting = new Map();
  window.__cuaLoaded = (id, payload) => {
    cache.set(id, payload);
    const w = waiting.get(id);
    if (w) { waiting.delete(id); w.resolve(payload); }
  };

  function load(id, fresh = false) {
    if (!fresh && cache.has(id)) return Promise.resolve(cache.get(id));
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      const s = document.createElement("script");
      s.src = "data/" + id.split("/").map(encodeURIComponent).join("/") + ".js" + (fresh ? "?t=" + Date.now() : "");
      s.onload = () => s.remove();
      s.onerror = () => { s.remove(); waiting.delete(id); reject(new Error("cannot load " + s.src)); };
      document.head.appendChild(s);
    });
  }

  // ------------------------------------------------------------------ DOM helpers

  const SVG = "http://www.w3.org/2000/svg";
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  function s(tag, attrs) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    return el;
  }
  const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");
  const ms = (x) => (x === null || x === undefined ? "–" : x >= 1000 ? (x / 1000).toFixed(2) + " s" : Math.round(x) + " ms");
  const num = (x, d = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));
  const json = (x) => JSON.stringify(x, null, 1);
  function statusCell(row) {
    if (row.status === "running") return h("span", { class: "running" }, "running");
    if (row.status === "infra_error") return h("span", { class: "infra" }, "infra error");
    return row.passed ? h("span", { class: "pass" }, "passed") : h("span", { class: "fail" }, "failed");
  }
  const epHref = (run, key) => `#/ep/${run}/${encodeURIComponent(key)}`;

  // ------------------------------------------------------------------ overview

  let index = null;
  let tab = "suite";
  let manifestOpen = false;
  let filter = "";

  function table(head, rows, cls) {
    return h("table", { class: cls || "" },
      h("thead", {}, h("tr", {}, head.map(([label, c]) => h("th", { class: c || "" }, label)))),
      h("tbody", {}, rows));
  }

  function successTable(groups) {
    return table([["group"], ["episodes", "num"], ["scored", "num"], ["passed", "num"], ["success", "num"], [""],
                  ["mean score", "num"], ["infra errors", "num"], ["running", "num"]],
      groups.map((g) => h("tr", { "data-group": g.group },
        h("td", {}, g.group), h("td", { class: "num" }, g.episodes), h("td", { class: "num" }, g.scored),
        h("td", { class: "num" }, g.passed), h("td", { class: "num" }, pct(g.success)),
        h("td", {}, h("span", { class: "bar", style: `width:${Math.round(120 * (g.success || 0))}px` })),
        h("td", { class: "num" }, num(g.mean_score)), h("td", { class: "num" }, g.infra),
        h("td", { class: "num" }, g.running))), "success");
  }

  function manifestFacts(m) {
    if (!m) return h("p", { class: "muted" }, "No manifest.json in this run.");
    const policy = m.policy || {};
    const facts = [
      ["cua", [m.cua && m.cua.version, m.cua && m.cua.git_commit && "@ " + m.cua.git_commit.slice(0, 12),
               m.cua && m.cua.git_dirty ? "(uncommitted changes)" : ""].filter(Boolean).join(" ")],
      ["policy", [policy.spec || policy.name, policy.family && "family " + policy.family].filter(Boolean).join(", ")],
      ["sampling", policy.sampling ? json(policy.sampling) : "–"],
      ["observe", m.observe ? json(m.observe) : "–"],
      ["seeds", (m.seeds || []).join(", ")],
      ["suites", (m.suites || []).map((x) => `${x.name} (${x.templates} templates)`).join(", ")],
      ["versions", Object.entries(m.versions || {}).map(([k, v]) => `${k} ${v}`).join(" · ")],
      ["machine", m.machine ? Object.entries(m.machine).map(([k, v]) => `${k}=${v}`).join(" · ") : "–"],
      ["command", (m.argv || []).join(" ")],
      ["invocations", (m.invocations || []).length > 1 ? `${m.invocations.length} (resumed ${m.invocations.length - 1}×)` : "1"],
      ["started", m.created_at ? new Date(m.created_at * 1000).toISOString() : "–"],
    ];
    return h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v || "–")]));
  }

  function timingBlock(t) {
    const m = t.mean_per_step_ms;
    const total = (m.policy || 0) + (m.environment || 0) + (m.judge || 0);
    const w = (x) => `width:${total ? (100 * x) / total : 0}%`;
    return h("div", { class: "timing" },
      h("div", { class: "stack", style: "width:32em" }, h("span", { class: "policy", style: w(m.policy) }),
        h("span", { class: "environment", style: w(m.environment) }), h("span", { class: "judge", style: w(m.judge) })),
      h("p", {}, h("span", { class: "key policy" }), `policy ${ms(m.policy)}`, h("span", { class: "key environment" }),
        `environment ${ms(m.environment)}`, h("span", { class: "key judge" }), `judge ${ms(m.judge)}`,
        h("span", { class: "muted" }, `  — mean per step over ${t.steps} steps (median episode: policy ${ms(t.median_episode_per_step_ms.policy)}, ` +
          `environment ${ms(t.median_episode_per_step_ms.environment)}, judge ${ms(t.median_episode_per_step_ms.judge)})`)));
  }

  function episodesTable(run, ri) {
    const q = filter.toLowerCase();
    const rows = run.rows.filter((r) => !q || [r.task_id, r.status, r.failure || "", r.passed ? "passed" : "failed",
      "seed " + r.seed].join(" ").toLowerCase().includes(q));
    return table([["task"], ["seed", "num"], ["status"], ["failure"], ["score", "num"], ["steps", "num"], ["attempts", "num"],
                  ["policy / step", "num"], ["env / step", "num"]],
      rows.map((r) => h("tr", { "data-key": r.key },
        h("td", {}, r.has_trajectory ? h("a", { href: epHref(ri, r.key) }, r.task_id) : r.task_id),
        h("td", { class: "num" }, r.seed), h("td", {}, statusCell(r)), h("td", {}, r.failure || ""),
        h("td", { class: "num" }, num(r.score)), h("td", { class: "num" }, r.steps),
        h("td", { class: "num" }, r.attempts),
        h("td", { class: "num" }, r.steps ? ms(r.timing_ms.policy / r.steps) : "–"),
        h("td", { class: "num" }, r.steps ? ms(r.timing_ms.environment / r.steps) : "–"))), "episodes");
  }

  function compareBlock() {
    const [a, b] = index.runs;
    const byTask = (run) => {
      const m = new Map();
      run.rows.forEach((r) => m.set(r.task_id + "#" + r.seed, r));
      return m;
    };
    const ma = byTask(a), mb = byTask(b);
    const cell = (m, ri, task, seed, passed) => {
      const r = m.get(task + "#" + seed);
      if (!r || passed === null || passed === undefined) return h("span", { class: "muted" }, "·");
      const mark = h("span", { class: passed ? "pass" : "fail" }, passed ? "✓" : "✗");
      return r.has_trajectory ? h("a", { href: epHref(ri, r.key), title: `${task} seed ${seed}` }, mark) : mark;
    };
    return h("section", { id: "compare" },
      h("h2", {}, `Per-task delta: ${b.name} (B) against ${a.name} (A)`),
      table([["task"], ["A success", "num"], ["B success", "num"], ["delta", "num"], ["seeds (A | B)"]],
        index.compare.map((d) => h("tr", { "data-task": d.task_id },
          h("td", {}, d.task_id), h("td", { class: "num" }, `${pct(d.a_rate)} (${d.a_passed}/${d.a_scored})`),
          h("td", { class: "num" }, `${pct(d.b_rate)} (${d.b_passed}/${d.b_scored})`),
          h("td", { class: "num " + (d.delta > 0 ? "delta-up" : d.delta < 0 ? "delta-down" : "") },
            d.delta === null ? "–" : (d.delta > 0 ? "+" : "") + (100 * d.delta).toFixed(1) + " pt"),
          h("td", {}, Object.entries(d.seeds).map(([seed, [pa, pb]]) => h("span", { class: "seedpair" },
            ` s${seed} `, cell(ma, 0, d.task_id, seed, pa), "|", cell(mb, 1, d.task_id, seed, pb)))))), "compare"));
  }

  // Repeats (pass@k, pass^k, flaky variants) and cost, from summary.json where the run has them.
  function summaryCards(summary) {
    if (!summary) return [];
    const cards = [];
    const r = summary.reliability;
    if (summary.repeats > 1 && r) {
      cards.push([`pass@${summary.repeats}`, pct(r.pass_at_k)], [`pass^${summary.repeats}`, pct(r.pass_all_k)],
                 ["flaky variants", `${r.flaky}/${r.variants}`]);
    }
    // Safety (cua eval --attacks N): the three figures side by side, "–" where the run has none of that kind.
    if (summary.utility_under_attack !== null && summary.utility_under_attack !== undefined) {
      cards.push(["utility", pct(summary.utility)], ["utility under attack", pct(summary.utility_under_attack)],
                 ["attack success rate", pct(summary.attack_success_rate)], ["unsafe episodes", summary.unsafe]);
    }
    // Reset-free streams (cua eval --stream): each stream's success without resets, and with, where run.
    for (const st of Object.values(summary.streams || {})) {
      cards.push([`stream ${st.id} (${st.length} tasks)`, pct(st.success)]);
      if (st.success_reset !== null && st.success_reset !== undefined) cards.push([`stream ${st.id} with resets`, pct(st.success_reset)]);
    }
    // Demonstration-conditioned eval (cua eval --demo): the two arms over the same instances.
    if (summary.demo) {
      const d = summary.demo;
      cards.push(["success with demo", pct(d.with_demo.success_rate)], ["success without demo", pct(d.without_demo.success_rate)],
                 ["demo gain", d.success_gain === null || d.success_gain === undefined ? "–"
                   : (d.success_gain > 0 ? "+" : "") + (100 * d.success_gain).toFixed(1) + " pt"]);
    }
    if (summary.tokens) cards.push(["tokens", summary.tokens.prompt + summary.tokens.completion]);
    if (summary.cost_usd !== null && summary.cost_usd !== undefined) cards.push(["cost $", summary.cost_usd.toFixed(4)]);
    return cards;
  }

  function overview() {
    const run = index.runs[0];
    const t = run.totals;
    const app = h("div", {},
      h("h1", {}, run.name),
      h("div", { class: "cards" },
        [["episodes", t.episodes], ["scored", t.scored], ["passed", t.passed], ["success", pct(t.success)],
         ["mean score", num(t.mean_score)], ["infra errors", t.infra], ["running", t.running],
         ...summaryCards(run.summary)].map(([k, v]) =>
          h("div", { class: "card", "data-card": k }, h("div", { class: "v" }, v), h("div", { class: "k" }, k)))),
      h("p", { class: "muted" }, "Success counts scored episodes: those lost to the infrastructure (after their retries) " +
        "and those still running are not scored against the agent."),
      run.problems.length ? h("div", { class: "error" }, run.problems.map((p) => h("div", {}, p))) : null,
      h("details", { open: manifestOpen, id: "manifest", ontoggle: (e) => { manifestOpen = e.target.open; } },
        h("summary", {}, "How this run was made (manifest.json)"), manifestFacts(run.manifest)),
      index.compare ? compareBlock() : null,
      h("h2", {}, "Success by"),
      h("div", { class: "tabs" }, ["suite", "app", "tier", "tag", "split"].map((by) =>
        h("button", { class: by === tab ? "on" : "", "data-tab": by, onclick: () => { tab = by; render(); } }, by))),
      successTable(run.breakdowns[tab]),
      h("h2", {}, "Failures"),
      run.failures.length ? table([["owner"], ["failure"], ["episodes", "num"], [""]],
        run.failures.map((f) => h("tr", { "data-failure": f.failure },
          h("td", { class: f.owner === "infra" ? "infra" : "fail" }, f.owner === "infra" ? "infrastructure" : "agent"),
          h("td", {}, f.failure), h("td", { class: "num" }, f.episodes),
          h("td", {}, h("span", { class: "bar " + (f.owner === "infra" ? "infra" : "fail"),
            style: `width:${Math.round(160 * f.episodes / Math.max(1, t.episodes))}px` })))), "failures")
        : h("p", { class: "muted" }, "No failures."),
      h("h2", {}, "Where the time goes, per step"), timingBlock(run.timing),
      h("h2", {}, "Episodes"),
      h("div", { class: "filters" }, h("input", { type: "search", placeholder: "filter: task, status, failure…",
        value: filter, oninput: (e) => { filter = e.target.value; document.querySelector("table.episodes").replaceWith(episodesTable(run, 0)); } })),
      episodesTable(run, 0),
      index.runs[1] ? [h("h2", {}, `Episodes of ${index.runs[1].name} (B)`), episodesTable(index.runs[1], 1)] : null);
    return app;
  }

  // ------------------------------------------------------------------ action drawing

  function describe(a) {
    if (!a) return "(no action)";
    const rest = Object.entries(a).filter(([k, v]) => k !== "type" && v !== null && !(Array.isArray(v) && !v.length));
    const show = (v) => (typeof v === "number" ? Math.round(v * 10) / 10 : Array.isArray(v) ? (v.length > 3 ? `[${v.length} points]` : JSON.stringify(v)) : JSON.stringify(v));
    return a.type + " " + rest.map(([k, v]) => `${k}=${show(v)}`).join(" ");
  }

  // What the overlay draws for an action: marks in the frame's own pixel coordinates (the SVG's
  // viewBox is the frame, so they land where the action did at any displayed size) and a caption.
  function overlay(action, size) {
    const svg = s("svg", { viewBox: `0 0 ${size.width} ${size.height}`, preserveAspectRatio: "none" });
    const r = Math.max(6, size.width / 90);
    let caption = null;
    const mark = (el, cls, a) => {
      el.setAttribute("class", "m " + cls);
      el.setAttribute("data-action", a.type);
      svg.appendChild(el);
      return el;
    };
    const point = (a, x, y, label) => {
      const g = s("g", { "data-marker": a.type, "data-x": x, "data-y": y });
      const c = s("circle", { cx: x, cy: y, r: r });
      c.setAttribute("class", "m dot");
      g.appendChild(c);
      for (const [x1, y1, x2, y2] of [[x - 2 * r, y, x - r * 0.4, y], [x + r * 0.4, y, x + 2 * r, y],
                                      [x, y - 2 * r, x, y - r * 0.4], [x, y + r * 0.4, x, y + 2 * r]]) {
        const l = s("line", { x1, y1, x2, y2 });
        l.setAttribute("class", "m");
        g.appendChild(l);
      }
      svg.appendChild(g);
      if (label) caption = label;
    };
    if (!action) return { svg, caption: null };
    switch (action.type) {
      case "click": {
        const extra = [action.button && action.button !== "left" ? action.button : "", action.count > 1 ? `×${action.count}` : ""].filter(Boolean).join(" ");
        point(action, action.x, action.y, extra ? `click ${extra}` : null);
        break;
      }
      case "move": case "mouse_down": case "mouse_up":
        if (action.x !== null && action.x !== undefined) point(action, action.x, action.y, action.type.replace("_", " "));
        else caption = action.type.replace("_", " ");
        break;
      case "scroll": {
        point(action, action.x, action.y, `scroll dx=${action.dx || 0} dy=${action.dy || 0}`);
        const len = Math.hypot(action.dx || 0, action.dy || 0) || 1;
        const k = Math.min(size.height / 4, 40 + len / 4) / len;
        const line = s("line", { x1: action.x, y1: action.y, x2: action.x + (action.dx || 0) * k, y2: action.y + (action.dy || 0) * k });
        mark(line, "arrow", action);
        break;
      }
      case "drag": {
        const pts = action.path || [];
        const pl = s("polyline", { points: pts.map((p) => `${p.x},${p.y}`).join(" ") });
        mark(pl, "path", action);
        const g = s("g", { "data-marker": "drag", "data-x": pts[0].x, "data-y": pts[0].y,
          "data-x2": pts[pts.length - 1].x, "data-y2": pts[pts.length - 1].y });
        svg.appendChild(g);
        const start = s("circle", { cx: pts[0].x, cy: pts[0].y, r: r * 0.7 });
        start.setAttribute("class", "m dot");
        const end = s("rect", { x: pts[pts.length - 1].x - r * 0.7, y: pts[pts.length - 1].y - r * 0.7, width: 1.4 * r, height: 1.4 * r });
        end.setAttribute("class", "m dot");
        g.append(start, end);
        caption = `drag through ${pts.length} points`;
        break;
      }
      case "tap": case "double_tap": case "long_press":
        point(action, action.x, action.y, action.type === "tap" ? null
          : action.type === "double_tap" ? "double tap" : `long press ${action.duration_ms} ms`);
        break;
      case "swipe": case "fling": {  // the finger's path: from its point, the distance towards its direction
        const [ux, uy] = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[action.direction] || [0, 0];
        point(action, action.x, action.y, `${action.type} ${action.direction} ${Math.round(action.distance)} px`);
        const line = s("line", { x1: action.x, y1: action.y, x2: action.x + ux * action.distance, y2: action.y + uy * action.distance });
        mark(line, "arrow", action);
        break;
      }
      case "pinch": point(action, action.x, action.y, `pinch ×${Math.round(action.scale * 100) / 100}`); break;
      case "nav": caption = `${action.button} button`; break;
      case "open_app": caption = `open app “${action.name}”`; break;
      case "type": caption = `type “${action.text}”`; break;
      case "key": caption = `key ${(action.keys || []).join("+")}`; break;
      case "key_down": case "key_up": caption = `${action.type.replace("_", " ")} ${action.key}`; break;
      case "done": caption = `done: ${action.status}${action.answer ? ` — answer “${action.answer}”` : ""}`; break;
      case "goto": caption = `goto ${action.url}`; break;
      default: caption = describe(action);
    }
    return { svg, caption };
  }

  function shot(obs, action, stepLabel) {
    const size = (obs && obs.size) || { width: 1280, height: 720 };
    const fig = h("div", { class: "shot", "data-step": stepLabel });
    if (obs && obs.frame) {
      fig.append(h("img", { src: obs.frame, alt: `screenshot at ${stepLabel}`, width: size.width, height: size.height }));
    } else {
      fig.append(h("div", { class: "noframe", style: `width:min(100%, ${size.width}px);aspect-ratio:${size.width}/${size.height}`,
        title: "no frame kept (frames policy)" }));
    }
    const { svg, caption } = overlay(action, size);
    fig.append(svg);
    if (caption) fig.append(h("div", { class: "badge", "data-caption": action ? action.type : "" }, caption));
    else if (action === null) fig.append(h("div", { class: "badge none" }, "no action (output did not parse)"));
    return fig;
  }

  // ------------------------------------------------------------------ episode viewer

  function stepTiming(t) {
    const g = { policy: t.policy || 0, environment: (t.act || 0) + (t.settle || 0), judge: t.judge || 0 };
    const total = g.policy + g.environment + g.judge;
    const w = (x) => `width:${total ? (100 * x) / total : 0}%`;
    return h("div", { class: "steptiming" },
      h("div", { class: "stack" }, Object.entries(g).map(([k, v]) => h("span", { class: k, style: w(v) }))),
      h("span", { class: "muted" }, `policy ${ms(g.policy)} · environment ${ms(g.environment)}` +
        (t.settle ? ` (settle ${ms(t.settle)})` : "") + (g.judge ? ` · judge ${ms(g.judge)}` : "")));
  }

  function axtreeBlock(id) {
    const box = h("pre", { class: "ax" }, "loading…");
    const det = h("details", { class: "axtree" }, h("summary", {}, "accessibility tree"), box);
    det.addEventListener("toggle", () => {
      if (!det.open || box.dataset.loaded) return;
      load(id).then((tree) => { box.dataset.loaded = "1"; box.textContent = axText(tree); },
        (e) => { box.textContent = String(e); });
    }, { once: false });
    return det;
  }

  function axText(tree) {
    const lines = [];
    const walk = (node, depth) => {
      if (!node || typeof node !== "object") return;
      if (Array.isArray(node)) { node.forEach((n) => walk(n, depth)); return; }
      const label = [node.role, node.name ? JSON.stringify(node.name) : "", node.value ? `= ${JSON.stringify(node.value)}` : ""]
        .filter(Boolean).join(" ");
      lines.push("  ".repeat(depth) + (label || JSON.stringify(node).slice(0, 120)));
      walk(node.children, depth + 1);
    };
    walk(tree, 0);
    return lines.join("\n");
  }

  function stepCard(step) {
    const obs = step.observation;
    const side = h("div", { class: "side" },
      h("div", {}, h("span", { class: "label" }, "action "), h("code", { class: "action" }, describe(step.action))),
      step.model_action ? h("div", { class: "muted" }, `model frame: ${describe(step.model_action)}` +
        (step.model_frame ? ` in ${step.model_frame.width}×${step.model_frame.height}` : "")) : null,
      step.error ? h("div", { class: "error action-error" }, `action error (${step.error.reason}): ${step.error.message}`) : null,
      step.parse_error ? h("div", { class: "error parse-error" }, `parse error: ${step.parse_error}`) : null,
      step.retries && step.retries.length ? h("div", { class: "retries" },
        h("div", { class: "label" }, `model calls retried before this answer: ${step.retries.length}`),
        h("ul", {}, step.retries.map((r) => h("li", { "data-status": r.status ?? "" },
          `${r.error} (waited ${ms(r.backoff_ms)} before trying again)`)))) : null,
      step.thought ? h("div", {}, h("div", { class: "label" }, "thought"), h("pre", { class: "thought" }, step.thought)) : null,
      step.raw ? h("div", {}, h("div", { class: "label" }, "model output"), h("pre", { class: "raw" }, step.raw)) : null,
      h("div", {}, h("div", { class: "label" }, "time"), stepTiming(step.timings_ms || {})),
      step.tokens ? h("div", { class: "muted" }, `tokens: prompt ${step.tokens.prompt ?? "–"}, completion ${step.tokens.completion ?? "–"}`) : null,
      step.progress !== null && step.progress !== undefined ? h("div", { class: "muted" }, `progress after: ${num(step.progress)}`) : null,
      obs && (obs.url || obs.title) ? h("div", { class: "muted" }, `${obs.title || ""} ${obs.url || ""}`) : null,
      obs && obs.focused ? h("div", { class: "muted" }, `focused: ${json(obs.focused)}`) : null,
      obs && obs.axtree ? axtreeBlock(obs.axtree) : null);
    return h("section", { class: "step" + (step.error || step.parse_error ? " has-error" : ""), "data-attempt": step.attempt,
      "data-index": step.index, id: `step-${step.attempt}-${step.index}` },
      h("div", {}, h("h3", {}, `step ${step.index}` + (step.turn !== step.index ? ` (turn ${step.turn})` : "")),
        shot(obs, step.action, `${step.attempt}-${step.index}`)), side);
  }

  function verdictBlock(ep) {
    const end = ep.end;
    if (!end) return h("p", { class: "running" }, "Still running: no end.json yet.");
    const v = end.verdict;
    return h("section", { class: "verdict" },
      h("h2", {}, "Verdict"),
      v ? h("div", { class: "cards" },
        h("div", { class: "card" }, h("div", { class: "v " + (v.passed ? "pass" : "fail") }, v.passed ? "passed" : "failed"),
          h("div", { class: "k" }, "verdict")),
        h("div", { class: "card" }, h("div", { class: "v" }, num(v.score)), h("div", { class: "k" }, "score")),
        h("div", { class: "card" }, h("div", { class: "v" }, num(v.progress)), h("div", { class: "k" }, "progress"))) : null,
      ep.failure ? h("p", {}, "failure: ", h("b", { class: "failure" }, ep.failure)) : null,
      end.error ? h("div", { class: "error end-error" }, `${end.error.code || "error"}: ${end.error.message || json(end.error)}`) : null,
      end.truncated ? h("p", { class: "fail" }, "Ran out of steps.") : null,
      end.done ? h("p", {}, `The agent said done: ${end.done.status}` + (end.done.answer ? ` — answer “${end.done.answer}”` : "")) : null,
      v && v.evidence.length ? table([["held"], ["what the judge saw"]],
        evidenceLines(end, v).map((e) => h("tr", { "data-check": e.check, "data-held": e.held ? "yes" : "no",
          "data-subgoal": e.subgoal ?? "" },
          h("td", { class: !e.needed ? "muted" : e.held ? "pass" : "fail" }, !e.needed ? "not needed" : e.held ? "yes" : "no"),
          h("td", { class: "sentence" }, e.sentence))), "evidence") : null,
      v && v.violations.length ? h("div", { class: "error violations" }, h("b", {}, "Side effects: "),
        v.violations.map((x) => h("div", {}, x))) : null);
  }

  // Sentences come with the episode (cua/report/evidence.py); a report written before they
  // did shows each check's own fields in the same two columns.
  function evidenceLines(end, v) {
    if (end.evidence) return end.evidence;
    return v.evidence.map((e) => ({ check: e.check, held: e.passed, needed: true, subgoal: null,
      sentence: `${e.check}: ${e.getter} read ${json(e.observed)}; expected ${json(e.expected)}` + (e.detail ? ` (${e.detail})` : "") }));
  }

  function episodeView(ep, run, row) {
    const rows = run.rows;
    const at = rows.findIndex((r) => r.key === ep.key);
    const neighbour = (d) => {
      for (let i = at + d; i >= 0 && i < rows.length; i += d) if (rows[i].has_trajectory) return rows[i];
      return null;
    };
    const prev = neighbour(-1), next = neighbour(1);
    const other = index.runs.length > 1 ? index.runs[1 - ep.run].rows.find((r) => r.task_id === ep.task_id && r.seed === ep.seed) : null;
    const attempts = [...new Set(ep.steps.map((st) => st.attempt))].sort((a, b) => a - b);
    const lost = attempts.filter((a) => a !== ep.final_attempt);
    const endAttempts = (ep.end && ep.end.attempts) || [];
    const finalSteps = ep.steps.filter((st) => st.attempt === ep.final_attempt);
    return h("div", { class: "episode", "data-key": ep.key },
      h("div", { class: "nav" }, h("a", { href: "#/" }, "← overview"),
        prev ? h("a", { href: epHref(ep.run, prev.key) }, "← previous episode") : null,
        next ? h("a", { href: epHref(ep.run, next.key) }, "next episode →") : null,
        other && other.has_trajectory ? h("a", { href: epHref(1 - ep.run, other.key) }, `same task in ${index.runs[1 - ep.run].name}`) : null),
      h("h1", {}, `${ep.task_id} · seed ${ep.seed} `, row ? statusCell(row) : null),
      h("div", { class: "instruction" }, ep.instruction),
      h("dl", { class: "facts" },
        [["agent", [ep.agent.name, ep.agent.kind, ep.agent.family, ep.agent.model].filter(Boolean).join(" · ")],
         ["settings", Object.keys(ep.agent.settings || {}).length ? json(ep.agent.settings) : "–"],
         ["sandbox", ep.sandbox_kind], ["tags", json(ep.tags)], ["observe", json(ep.observe)],
         ["run", run.name], ["attempts", String(attempts.length || 1) + (lost.length ? ` (${lost.length} lost to the infrastructure)` : "")],
         ["model calls retried", String(ep.steps.reduce((n, st) => n + (st.retries ? st.retries.length : 0), 0))]]
          .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      verdictBlock(ep),
      h("h2", {}, `Steps (${finalSteps.length})`),
      finalSteps.map(stepCard),
      ep.final ? h("section", { class: "step final" }, h("div", {}, h("h3", {}, "final state"), shot(ep.final, undefined, "final")),
        h("div", { class: "side" }, h("div", { class: "muted" }, `${ep.final.title || ""} ${ep.final.url || ""}`),
          ep.final.axtree ? axtreeBlock(ep.final.axtree) : null)) : null,
      lost.map((a) => {
        const info = endAttempts.find((x) => x.attempt === a);
        return h("details", { class: "attempt-lost", "data-attempt": a },
          h("summary", {}, `attempt ${a}, lost to the infrastructure` +
            (info && info.error ? `: ${info.error.code} — ${info.error.message}` : "")),
          ep.steps.filter((st) => st.attempt === a).map(stepCard));
      }),
      ep.bad_lines.length ? h("div", { class: "error" }, `unreadable lines in steps.jsonl: ${json(ep.bad_lines)}`) : null);
  }

  // ------------------------------------------------------------------ routing

  const app = document.getElementById("app");
  async function render() {
    const route = location.hash.replace(/^#\/?/, "").split("/");
    document.getElementById("run-name").textContent = index.runs.map((r) => r.name).join("  vs  ");
    document.title = `cua report · ${index.runs.map((r) => r.name).join(" vs ")}`;
    document.getElementById("live").hidden = !index.live;
    if (route[0] === "ep") {
      const ri = Number(route[1]), key = decodeURIComponent(route.slice(2).join("/"));
      const run = index.runs[ri];
      const row = run && run.rows.find((r) => r.key === key);
      try {
        const ep = await load(`ep/${ri}/${key}`, index.live && row && row.status === "running");
        app.replaceChildren(episodeView(ep, run, row));
      } catch (e) {
        app.replaceChildren(h("p", { class: "error" }, `This episode has no trajectory in the report: ${e.message}`));
      }
      return;
    }
    const y = window.scrollY;
    app.replaceChildren(overview());
    window.scrollTo(0, y);
  }

  window.addEventListener("hashchange", () => { render(); window.scrollTo(0, 0); });

  async function poll() {
    try {
      const fresh = await load("index", true);
      if (!index || fresh.generated_at !== index.generated_at) {
        const changed = !index || JSON.stringify(fresh.runs.map((r) => r.rows)) !== JSON.stringify(index.runs.map((r) => r.rows));
        index = fresh;
        if (changed) {
          for (const k of [...cache.keys()]) if (k.startsWith("ep/")) cache.delete(k);
          await render();
        }
      }
    } catch (e) { /* the server may be restarting; try again at the next tick */ }
    setTimeout(poll, 2000);
  }

  load("index").then((data) => {
    index = data;
    render().then(() => { document.body.dataset.ready = "1"; });
    if (data.live && location.protocol.startsWith("http")) setTimeout(poll, 2000);
  }, (e) => { app.replaceChildren(h("p", { class: "error" }, String(e))); });
})();
