// cua shim for MiniWoB++ pages: starts the seeded episode when the page loads and
// reports MiniWoB's own reward to the service. MiniWoB's JavaScript draws the problem
// and computes the reward; this file only starts the episode and copies the result.
//
// The service decides what an episode is (tasks/miniwob/app.py): on load the shim asks
// it (POST /cua/episode/open) and gets one of
//   new    - start the episode with the task's own time limit (0: the service runs untimed);
//   resume - the page was reloaded mid-episode: draw the same problem again (same seed)
//            with the time already spent taken off the limit;
//   over   - the episode has ended: show only the end screen, no problem.
// Only the first end is stored (POST /cua/episode/end), so a reload never gives a
// second try. URL parameter: seed (Math.seedrandom seed, as MiniWoB's Python env sets it).
//
// The result is also copied to <div id="cua-wob"> data-* attributes (DomQuery). Calls
// are synchronous on purpose: the episode's start and end must be stored before the
// load or the click that caused them has finished, so a state read right after sees them.
(function () {
  var params = new URLSearchParams(window.location.search);
  var seedText = params.get("seed") || "";
  var task = (window.location.pathname.split("/").pop() || "").replace(/\.html$/, "");
  var NO_LIMIT_MS = 2000000000;
  var started = false;
  var restarting = false;  // inside __cuaRestart: the service was reset just before
  var originalStart = core.startEpisode;
  var originalEnd = core.endEpisode;

  function box() {
    var el = document.getElementById("cua-wob");
    if (!el) {
      el = document.createElement("div");
      el.id = "cua-wob";
      el.hidden = true;
      document.body.appendChild(el);
    }
    return el;
  }

  function call(path, payload) {
    var xhr = new XMLHttpRequest();
    xhr.open("POST", path, false);
    xhr.setRequestHeader("content-type", "application/json");
    try {
      xhr.send(JSON.stringify(payload));
    } catch (e) {
      box().setAttribute("data-post-error", String(e));
      return null;
    }
    if (xhr.status !== 200) {
      box().setAttribute("data-post-error", "HTTP " + xhr.status + ": " + xhr.responseText);
      return null;
    }
    return JSON.parse(xhr.responseText);
  }

  function utteranceText() {
    var u = core.getUtterance();
    // Some tasks give {utterance, fields} in train mode (as MiniWoB's env reads it).
    return (u !== null && typeof u === "object") ? String(u.utterance) : String(u);
  }

  function show(state) {
    var el = box();
    el.setAttribute("data-task", task);
    for (var key in state) {
      var value = state[key];
      el.setAttribute("data-" + key.replace(/_/g, "-"), value === null || value === undefined ? "" : String(value));
    }
  }

  function showOver(answer) {
    // The end screen only: the problem is not drawn again.
    core.cover_div.innerHTML = "DONE";
    core.cover_div.onclick = null;
    core.cover_div.setAttribute("data-cua", "episode-over");
    core.cover_div.style.display = "block";
    if (answer) {
      show({ done: true, utterance: answer.utterance, reward: answer.reward, raw_reward: answer.raw_reward,
             reason: answer.reason });
    }
  }

  function rearmTimer(limitMs, elapsedMs) {
    // What core.startEpisodeReal set up, with the time already spent taken off.
    if (core.EP_TIMER !== null) { clearTimeout(core.EP_TIMER); }
    core.ept0 = new Date().getTime() - elapsedMs;
    var left = limitMs - elapsedMs;
    core.EP_TIMER = setTimeout(function () { core.endEpisode(-1, false, "timed out"); }, Math.max(0, left));
    core.countdownTimer(Math.max(0, Math.ceil(left / 1000) * 1000));
  }

  function draw() {
    var n = Number(seedText);
    Math.seedrandom(seedText !== "" && !isNaN(n) ? n : seedText);
    if (typeof core.setDataMode === "function") core.setDataMode("train");
    core.startEpisodeReal();
    return utteranceText();
  }

  function stopClock() {
    if (core.EP_TIMER !== null) { clearTimeout(core.EP_TIMER); core.EP_TIMER = null; }
    core.clearTimer();
  }

  core.startEpisode = function () {
    originalStart.call(core);
    if (started) {  // MiniWoB shows its START cover after an end: the episode is over
      showOver(null);
      return;
    }
    started = true;
    var pageLimit = core.EPISODE_MAX_TIME;  // the task's own, as its script set it
    if (restarting) {
      // An in-page restart comes right after the service was reset, so the episode is a
      // new one: the problem is drawn first and opened with its utterance in one call
      // (a load asks first, since a reloaded page whose episode is over must not draw it).
      core.EPISODE_MAX_TIME = NO_LIMIT_MS;  // re-armed below with the limit the service gives
      var drawn = draw();
      var opened = call("/cua/episode/open", { task: task, seed: seedText, page_limit_ms: pageLimit,
                                               utterance: drawn });
      if (opened === null || opened.status === "over") { stopClock(); showOver(opened); return; }
      core.EPISODE_MAX_TIME = opened.limit_ms > 0 ? opened.limit_ms : NO_LIMIT_MS;
      show({ done: false, utterance: drawn, time_limit_ms: opened.limit_ms, status: opened.status });
      rearmTimer(core.EPISODE_MAX_TIME, opened.elapsed_ms);
      return;
    }
    var answer = call("/cua/episode/open", { task: task, seed: seedText, page_limit_ms: pageLimit });
    if (answer === null) { showOver(null); return; }
    if (answer.status === "over") { showOver(answer); return; }
    core.EPISODE_MAX_TIME = answer.limit_ms > 0 ? answer.limit_ms : NO_LIMIT_MS;
    var utterance = draw();
    call("/cua/episode/utterance", { task: task, seed: seedText, utterance: utterance });
    show({ done: false, utterance: utterance, time_limit_ms: answer.limit_ms, status: answer.status });
    if (answer.status === "resume") rearmTimer(core.EPISODE_MAX_TIME, answer.elapsed_ms);
  };

  // The sandbox's in-page reset (sandboxes/browser: `window.__cuaRestart`), as MiniWoB's
  // own env resets: a new episode in the loaded page, without a reload. Called after the
  // service was reset, with the start URL of the same task page; it ends what the last
  // episode left running, puts back what a fresh load shows, and starts the episode as a
  // load would (the service opens it). Any other URL: false, and the sandbox loads it.
  Object.defineProperty(window, "__cuaRestart", { enumerable: false, value: function (url) {
    var next = new URL(url, window.location.href);
    if (next.origin !== window.location.origin || next.pathname !== window.location.pathname) return false;
    history.replaceState(null, "", next.pathname + next.search + next.hash);
    seedText = new URLSearchParams(next.search).get("seed") || "";
    stopClock();
    var old = document.getElementById("cua-wob");
    if (old) old.remove();
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    core.wob_latest = "-"; core.wob_scores = []; WOB_EPISODE_ID = 0;
    var display = document.getElementById("reward-display");
    if (display) display.innerHTML = core.DISPLAY_HTML;
    if (core.cover_div) {
      core.cover_div.innerHTML = "START";
      core.cover_div.removeAttribute("data-cua");
    }
    started = false;
    restarting = true;
    try { core.startEpisode(); } finally { restarting = false; }
    return true;
  } });

  core.endEpisode = function (reward, timeProportional, reason) {
    var live = core.EP_TIMER !== null;
    originalEnd.call(core, reward, timeProportional, reason);
    if (!live) return;  // MiniWoB ignores ends after the first, and so does the report
    var result = { task: task, seed: seedText, reward: WOB_REWARD_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL,
                   reason: WOB_REWARD_REASON === undefined ? null : WOB_REWARD_REASON };
    var answer = call("/cua/episode/end", result);
    show({ done: true, reward: result.reward, raw_reward: result.raw_reward, reason: result.reason,
           counted: answer !== null && answer.counted });
  };
})();
