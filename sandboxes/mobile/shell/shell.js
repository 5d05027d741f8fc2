// The phone shell: status bar, home screen and app drawer, recents, notification shade,
// system dialogs, on-screen keyboard area and navigation bar, with Android's back, home and
// recents. Each app runs full screen in an iframe at its own origin. The shell's state is
// kept in sessionStorage on every change, so a browser snapshot holds it and a restore's
// load finds it; the page's config (apps, their origins, clock) comes from the sandbox as
// window.__cuaPhone. README.md describes the protocol apps speak with it (postMessage).
(() => {
  "use strict";
  const cfg = window.__cuaPhone;
  if (!cfg) { document.body.textContent = "phone shell: no configuration"; return; }
  const KEY = "cua.shell";
  const $ = (id) => document.getElementById(id);
  const apps = new Map(cfg.apps.map((a) => [a.id, a]));
  const fresh = () => ({ screen: "home", current: null, recents: [], stacks: {}, shade: false, dialog: null,
    permissions: {}, shares: [], before_recents: null });
  let st;
  try { st = JSON.parse(sessionStorage.getItem(KEY)) || null; } catch (e) { st = null; }
  const started = !st;
  if (!st) st = fresh();
  let keyboard = false;
  let notifications = [];
  const frames = new Map();  // app id -> iframe
  const save = () => { try { sessionStorage.setItem(KEY, JSON.stringify(st)); } catch (e) { /* no storage */ } };

  // --- status bar ---
  const clock = new Date(cfg.clock);
  const hhmm = String(clock.getHours()).padStart(2, "0") + ":" + String(clock.getMinutes()).padStart(2, "0");
  $("clock").textContent = hhmm;
  $("shade-clock").textContent = hhmm;

  // --- icons ---
  const icon = (app, where) => {
    const b = document.createElement("button");
    b.className = "icon";
    b.dataset.app = app.id;
    b.setAttribute("aria-label", app.label);
    const g = document.createElement("span");
    g.className = "glyph";
    g.style.background = app.color;
    g.textContent = app.label.slice(0, 1).toUpperCase();
    const t = document.createElement("span");
    t.textContent = app.label;
    b.append(g, t);
    b.addEventListener("click", () => openApp(app.id));
    where.append(b);
  };
  cfg.apps.slice(0, cfg.home_count).forEach((a) => icon(a, $("home-grid")));
  [...cfg.apps].sort((a, b) => a.label.localeCompare(b.label)).forEach((a) => icon(a, $("drawer-grid")));

  // --- app frames ---
  const rootUrl = (id) => apps.get(id).origin + "/";
  const frameOf = (id) => {
    let f = frames.get(id);
    if (!f) {
      f = document.createElement("iframe");
      f.name = id;
      f.title = apps.get(id).label;
      const stack = st.stacks[id] || (st.stacks[id] = [rootUrl(id)]);
      f.src = stack[stack.length - 1];
      frames.set(id, f);
      $("apps").append(f);
    }
    return f;
  };
  const navigateFrame = (id, url) => {
    const f = frameOf(id);
    try { f.contentWindow.location.replace(url); } catch (e) { f.src = url; }
  };
  const appOfSource = (source) => {
    for (const [id, f] of frames) if (f.contentWindow === source) return id;
    return null;
  };

  // --- rendering ---
  // rebuilt only when what it shows changed: the cards a finger may be on stay
  const renderRecents = () => {
    const list = $("recents-list");
    const key = JSON.stringify(st.recents.map((id) => [id, (st.stacks[id] || []).slice(-1)]));
    if (key === list.dataset.shown) return;
    list.dataset.shown = key;
    list.textContent = "";
    for (const id of st.recents) {
      const card = document.createElement("div");
      card.className = "card";
      card.dataset.app = id;
      const open = document.createElement("button");
      open.className = "open";
      open.setAttribute("aria-label", "Open " + apps.get(id).label);
      open.textContent = apps.get(id).label;
      const where = document.createElement("small");
      const stack = st.stacks[id] || [];
      where.textContent = (stack[stack.length - 1] || "").replace(apps.get(id).origin, "");
      open.append(where);
      open.addEventListener("click", () => openApp(id));
      const close = document.createElement("button");
      close.className = "close";
      close.setAttribute("aria-label", "Close " + apps.get(id).label);
      close.textContent = "\u2715";
      close.addEventListener("click", () => closeApp(id));
      card.append(open, close);
      list.append(card);
    }
  };
  const render = () => {
    $("home").hidden = st.screen !== "home";
    $("drawer").hidden = st.screen !== "drawer";
    $("recents").hidden = st.screen !== "recents";
    for (const [id, f] of frames) f.classList.toggle("current", st.screen === "app" && st.current === id);
    renderRecents();
    $("recents-empty").hidden = st.recents.length > 0;
    $("shade").hidden = !st.shade;
    renderNotifications();
    renderDialog();
    const kb = keyboard && st.screen === "app" && !st.dialog;
    document.body.classList.toggle("kb", kb);
    $("keyboard").hidden = !kb;
  };
  const change = () => { save(); render(); };

  // --- Android's semantics ---
  const openApp = (id, link) => {
    if (!apps.has(id)) return false;
    st.recents = [id, ...st.recents.filter((r) => r !== id)];
    const known = !!st.stacks[id];
    frameOf(id);
    if (link) {
      const url = apps.get(id).origin + link;
      if (known) { st.stacks[id].push(url); navigateFrame(id, url); }
      else { st.stacks[id] = [url]; frames.get(id).src = url; }
    }
    st.screen = "app"; st.current = id; st.shade = false;
    if (!cfg.keep_keyboard) keyboard = false;
    change();
    return true;
  };
  const closeApp = (id) => {
    const f = frames.get(id);
    if (f) { f.remove(); frames.delete(id); }
    delete st.stacks[id];
    st.recents = st.recents.filter((r) => r !== id);
    if (st.current === id) st.current = null;
    change();
  };
  const goHome = () => {
    st.screen = "home"; st.current = null; st.shade = false; keyboard = false;
    if (st.dialog) answerDialog(null);
    change();
  };
  const back = () => {
    if (st.dialog) { answerDialog(null); change(); return; }
    if (st.shade) { st.shade = false; change(); return; }
    if (keyboard && st.screen === "app") { keyboard = false; post(st.current, { kind: "blur" }); change(); return; }
    if (st.screen === "drawer") { st.screen = "home"; change(); return; }
    if (st.screen === "recents") {
      const prev = st.before_recents;
      if (prev && apps.has(prev) && st.recents.includes(prev)) { st.screen = "app"; st.current = prev; }
      else st.screen = "home";
      change(); return;
    }
    if (st.screen === "app" && st.current) {
      const stack = st.stacks[st.current];
      if (stack.length > 1) {
        stack.pop();
        navigateFrame(st.current, stack[stack.length - 1]);
        change(); return;
      }
      goHome(); return;  // at the app's root: back leaves it; it stays in recents
    }
  };
  const recents = () => {
    if (st.dialog) answerDialog(null);
    st.before_recents = st.screen === "app" ? st.current : null;
    st.screen = "recents"; st.shade = false; keyboard = false;
    change();
  };
  const nav = (button) => {
    if (button === "back") back();
    else if (button === "home") goHome();
    else if (button === "recents") recents();
    else return false;
    return true;
  };
  $("nav-back").addEventListener("click", back);
  $("nav-home").addEventListener("click", goHome);
  $("nav-recents").addEventListener("click", recents);
  $("drawer-handle").addEventListener("click", () => { st.screen = "drawer"; change(); });
  // a tap outside the open shade shuts it, and does nothing else
  document.addEventListener("click", (e) => {
    if (!st.shade || e.target.closest("#shade")) return;
    e.preventDefault(); e.stopPropagation();
    st.shade = false; change();
  }, true);

  // --- gestures on the shell itself: pull the shade down from the status bar, the drawer up from home ---
  // (decided when the finger lifts, as the shade settles open or shut on a phone)
  let touch = null;
  document.addEventListener("touchstart", (e) => {
    const t = e.touches[0];
    // a finger on the bars scrolls nothing: no scroll begins (else its fling, on a page that
    // cannot scroll, would swallow the next tap as the one that stops it)
    const fixed = !e.target.closest("#home, #drawer, #recents, #shade");
    touch = e.touches.length === 1 ? { x: t.clientX, y: t.clientY, dy: 0, fixed } : null;
  }, { passive: true });
  document.addEventListener("touchmove", (e) => {
    if (touch && touch.fixed) e.preventDefault();
    if (touch && e.touches.length === 1) touch.dy = e.touches[0].clientY - touch.y;
    else touch = null;
  }, { passive: false });
  document.addEventListener("touchend", () => {
    if (!touch) return;
    const { y, dy } = touch;
    touch = null;
    if (!st.shade && y < 40 && dy > 40) openShade();
    else if (st.shade && dy < -40) { st.shade = false; change(); }
    else if (st.screen === "home" && !st.shade && y > 40 && dy < -60) { st.screen = "drawer"; change(); }
    else if (st.screen === "drawer" && dy > 80 && $("drawer").scrollTop === 0) { st.screen = "home"; change(); }
  }, { passive: true });

  // --- notification shade ---
  const openShade = () => {
    st.shade = true; change();
    // the apps' notifications come from their state() through the sandbox (a binding)
    if (typeof window.__cuaPhoneNotifications !== "function") return;
    const settle = window.__cuaSettle, token = { at: performance.now() };
    if (settle && settle.fetches) settle.fetches.add(token);
    const done = () => { if (settle && settle.fetches) settle.fetches.delete(token); };
    window.__cuaPhoneNotifications().then((list) => { notifications = Array.isArray(list) ? list : []; done(); render(); },
      () => { done(); });
  };
  let shownNotifications = null;
  const renderNotifications = () => {
    const ul = $("notifications");
    const key = JSON.stringify(notifications);
    if (key === shownNotifications) return;  // unchanged: keep the buttons a finger may be on
    shownNotifications = key;
    ul.textContent = "";
    for (const n of notifications) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.dataset.app = n.app; b.dataset.id = n.id;
      const label = apps.has(n.app) ? apps.get(n.app).label : n.app;
      const strong = document.createElement("strong"); strong.textContent = n.title || "";
      const text = document.createElement("div"); text.textContent = n.text || "";
      const small = document.createElement("small"); small.textContent = label + (n.time ? " \u00b7 " + n.time : "");
      b.append(small, strong, text);
      b.addEventListener("click", () => {
        st.opened_notifications = [...(st.opened_notifications || []), { app: n.app, id: n.id }];
        openApp(n.app, typeof n.link === "string" && n.link.startsWith("/") ? n.link : null);
      });
      li.append(b); ul.append(li);
    }
    $("no-notifications").hidden = notifications.length > 0;
  };

  // --- system dialogs: a permission prompt, a share sheet ---
  const post = (id, msg) => {
    const f = frames.get(id);
    if (f && f.contentWindow) f.contentWindow.postMessage({ __cuaPhone: true, ...msg }, apps.get(id).origin);
  };
  const answerDialog = (answer) => {
    const d = st.dialog;
    if (!d) return;
    st.dialog = null;
    if (d.type === "permission") {
      const granted = answer === "allow";
      if (answer !== null) (st.permissions[d.app] = st.permissions[d.app] || {})[d.permission] = granted ? "granted" : "denied";
      post(d.app, { kind: "permission_result", req: d.req, permission: d.permission, granted });
    } else if (d.type === "share") {
      post(d.app, { kind: "share_result", req: d.req, target: answer });
      if (answer) {
        st.shares.push({ from: d.app, to: answer, text: d.text });
        openApp(answer, cfg.share_paths[answer].replace("{text}", encodeURIComponent(d.text)));
        return;
      }
    }
  };
  let shownDialog = null;
  const renderDialog = () => {
    const box = $("dialog"), d = st.dialog;
    box.hidden = !d;
    const key = JSON.stringify(d);
    if (key === shownDialog) return;
    shownDialog = key;
    box.textContent = "";
    if (!d) return;
    const inner = document.createElement("div");
    inner.className = "box" + (d.type === "share" ? " sheet" : "");
    const title = document.createElement("p");
    const actions = document.createElement("div");
    actions.className = "actions";
    const button = (label, answer) => {
      const b = document.createElement("button");
      b.textContent = label;
      b.addEventListener("click", () => { answerDialog(answer); change(); });
      actions.append(b);
    };
    const label = apps.get(d.app).label;
    if (d.type === "permission") {
      title.textContent = `Allow ${label} to access ${d.permission}?`;
      button("Allow", "allow"); button("Don\u2019t allow", "deny");
    } else {
      title.textContent = "Share";
      const text = document.createElement("p"); text.textContent = d.text;
      inner.append(text);
      for (const target of Object.keys(cfg.share_paths)) if (target !== d.app && apps.has(target)) button(apps.get(target).label, target);
      button("Cancel", null);
    }
    inner.prepend(title);
    inner.append(actions);
    box.append(inner);
  };

  // --- keyboard area ---
  const ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm\u232b", " \u21b5"];
  for (const row of ROWS) {
    const r = document.createElement("div"); r.className = "row";
    for (const ch of row) {
      const b = document.createElement("button");
      b.dataset.key = ch;
      b.textContent = ch === " " ? "space" : ch;
      if (ch === " ") b.className = "wide";
      b.setAttribute("aria-label", ch === " " ? "space" : ch === "\u232b" ? "Backspace" : ch === "\u21b5" ? "Enter" : ch);
      r.append(b);
    }
    $("keyboard").append(r);
  }
  // a key acts on touch-down and cancels the touch, so the field in the app keeps its focus
  $("keyboard").addEventListener("touchstart", (e) => {
    e.preventDefault();
    const b = e.target.closest("button");
    if (b && st.current) post(st.current, { kind: "key", key: b.dataset.key });
  }, { passive: false });
  const kbHeight = Math.round(window.innerHeight * (window.innerWidth > window.innerHeight ? 0.45 : 0.36));
  document.documentElement.style.setProperty("--kb", kbHeight + "px");

  // --- messages from the apps' frames (their init script, or the app itself) ---
  window.addEventListener("message", (e) => {
    const d = e.data;
    if (!d || d.__cuaPhone !== true) return;
    const id = appOfSource(e.source);
    if (!id || e.origin !== apps.get(id).origin) return;  // only an app's own frame speaks for it
    if (d.kind === "url" && typeof d.url === "string") {
      const stack = st.stacks[id] || (st.stacks[id] = []);
      if (stack[stack.length - 1] === d.url) return;
      if (stack.length > 1 && stack[stack.length - 2] === d.url) stack.pop();  // the app went back itself
      else stack.push(d.url);
      save();
    } else if (d.kind === "focus") {
      if (id === st.current && keyboard !== !!d.editable) { keyboard = !!d.editable; render(); }
    } else if (d.kind === "tick") {
      $("apps").dataset.tick = String((Number($("apps").dataset.tick) || 0) + 1);  // the app's changes count for settling
    } else if (d.kind === "permission" && typeof d.permission === "string") {
      const known = (st.permissions[id] || {})[d.permission];
      if (known) { post(id, { kind: "permission_result", req: d.req, permission: d.permission, granted: known === "granted" }); return; }
      if (st.dialog) answerDialog(null);
      st.dialog = { type: "permission", app: id, permission: d.permission.slice(0, 64), req: d.req };
      change();
    } else if (d.kind === "share" && typeof d.text === "string") {
      if (st.dialog) answerDialog(null);
      st.dialog = { type: "share", app: id, text: d.text.slice(0, 2000), req: d.req };
      change();
    }
  });

  // --- the sandbox's side ---
  Object.defineProperty(window, "__cuaShell", { value: Object.freeze({
    openApp: (name) => {
      const wanted = String(name).trim().toLowerCase();
      const app = cfg.apps.find((a) => a.id.toLowerCase() === wanted || a.label.toLowerCase() === wanted);
      return app ? openApp(app.id) : false;
    },
    nav,
    state: () => ({
      screen: st.screen, open_app: st.screen === "app" ? st.current : null, recents: [...st.recents],
      stacks: JSON.parse(JSON.stringify(st.stacks)), shade_open: st.shade, keyboard_open: keyboard && st.screen === "app",
      dialog: st.dialog ? { ...st.dialog } : null, permissions: JSON.parse(JSON.stringify(st.permissions)),
      shares: [...st.shares], opened_notifications: [...(st.opened_notifications || [])],
      notifications_shown: notifications.map((n) => ({ app: n.app, id: n.id })),
    }),
  }) });

  // after a restore the open app comes back where it was; the others in recents load their
  // page (the top of their stack) when reopened, so a restore loads one app, not all
  if (st.screen === "app" && st.current && apps.has(st.current)) frameOf(st.current);
  if (started && cfg.start_app) openApp(cfg.start_app);
  else change();
  if (st.shade) openShade();
})();
