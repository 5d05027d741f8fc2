// cua shim for MiniWoB++ pages: starts one seeded episode as soon as the page loads
// and reports MiniWoB's own reward where judges can read it. MiniWoB's JavaScript
// computes the reward; this file only starts the episode and copies the result.
//
// URL parameters: seed (Math.seedrandom seed, as MiniWoB's Python env sets it),
// mode (core.setDataMode, default "train"), max_time_ms (MiniWoB's episode time
// limit; default 0 = no limit, since screenshot agents are far slower than the 10 s
// the original limit assumes; pass 10000 to reproduce it).
//
// The result goes to (1) <div id="cua-wob"> data-* attributes (DomQuery), (2)
// localStorage "cua.wob" (LocalStorageQuery), and (3) POST /cua/episode, stored by
// the service in SQLite before it answers, so it survives leaving the page.
(function () {
  var params = new URLSearchParams(window.location.search);
  var seedText = params.get("seed");
  var maxTime = parseInt(params.get("max_time_ms") || "0", 10);
  var mode = params.get("mode") || "train";
  var task = (window.location.pathname.split("/").pop() || "").replace(/\.html$/, "");
  var started = false;
  var reported = false;
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

  function record(done) {
    var result = {
      task: task, seed: seedText, utterance: core.getUtterance(), done: done,
      reward: WOB_REWARD_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON,
    };
    var el = box();
    el.setAttribute("data-task", result.task);
    el.setAttribute("data-utterance", result.utterance);
    el.setAttribute("data-done", done ? "true" : "false");
    el.setAttribute("data-reward", String(result.reward));
    el.setAttribute("data-raw-reward", String(result.raw_reward));
    el.setAttribute("data-reason", result.reason === null || result.reason === undefined ? "" : String(result.reason));
    try { window.localStorage.setItem("cua.wob", JSON.stringify(result)); } catch (e) { /* storage may be off */ }
    return result;
  }

  function post(result) {
    var body = JSON.stringify(result);
    var xhr = new XMLHttpRequest();
    // Synchronous on purpose: the episode's end must be stored before the click that
    // ended it has finished, so a judge reading right after the action sees it.
    xhr.open("POST", "/cua/episode", false);
    xhr.setRequestHeader("content-type", "application/json");
    try { xhr.send(body); } catch (e) { box().setAttribute("data-post-error", String(e)); }
  }

  core.startEpisode = function () {
    if (started) {
      // One episode per page load: show the end screen instead of a new START cover.
      originalStart.call(core);
      core.cover_div.innerHTML = "DONE";
      core.cover_div.onclick = null;
      core.cover_div.setAttribute("data-cua", "episode-over");
      return;
    }
    started = true;
    originalStart.call(core);
    if (seedText !== null) {
      var n = Number(seedText);
      Math.seedrandom(seedText !== "" && !isNaN(n) ? n : seedText);
    }
    if (typeof core.setDataMode === "function") core.setDataMode(mode);
    core.EPISODE_MAX_TIME = maxTime > 0 ? maxTime : 2000000000;
    core.startEpisodeReal();
    post(record(false));
  };

  core.endEpisode = function (reward, timeProportional, reason) {
    var live = core.EP_TIMER !== null;
    originalEnd.call(core, reward, timeProportional, reason);
    if (live && !reported) {
      reported = true;
      post(record(true));
    }
  };
})();
