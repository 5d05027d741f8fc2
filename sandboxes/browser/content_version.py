"""What bumps a page's content and screen versions: the part of the settle init script that watches.

The host reuses the accessibility tree of a page whose content version has not moved since
it was read (observe.py), so the version must move with everything the tree shows. DOM
mutations bump it in the settle script; this part adds what changes the tree without a
mutation:
- form values typed or chosen (`input`, `change`), a form `reset`, scroll offsets, the
  viewport, and focus moving (the tree's `focused` state);
- form state a script sets (`checkbox.checked = true`, `select.selectedIndex = 1`, ...),
  which fires no event: the setters bump too;
- the pointer entering or leaving an element that one of the page's `:hover` rules can
  match (a menu that opens on hover).

For the last, each rule with `:hover` stands for its subject compound with its other
pseudo-classes dropped (`nav li:hover > ul` for `li`), so the test can only err towards a
bump. Rules the page cannot read (another origin's sheet), `:hover` inside a function or
a nested rule, and shadow trees count as matching anything. A move onto elements no rule
can match (most clicks on most pages) keeps the version, and the tree is reused.

The screen version adds what changes the screen but not the tree: the pointer entering or
leaving a control the browser draws itself (a checkbox looks different under the pointer)
or an element a `:hover` rule can match, a selection shown or hidden, an animation or a
transition starting or ending, an image, a font or a `<details>` toggling. The host sends
the last capture again while the screen version holds (observe.py), so it answers only
when nothing can change the screen without one of those events: no media, frames,
canvases, SVG animation or images from style sheets on the page, no caret blinking in a
focused field, no animation running, every font loaded. Otherwise it is null, and every
observation is a new capture.

The fragment runs inside the settle script, where `s` (the page's state) and `bump()` are
defined.
"""

from __future__ import annotations

__all__ = ["VERSION_WATCH_JS"]

VERSION_WATCH_JS = r"""
  for (const type of ["input", "change", "scroll", "resize", "focusin", "focusout", "reset"]) {
    window.addEventListener(type, bump, true);
  }
  const watch = (proto, names) => {
    for (const name of names) {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (!d) continue;
      if (d.set) {
        const set = d.set;
        Object.defineProperty(proto, name, { ...d, set(v) { bump(); return set.call(this, v); } });
      } else if (typeof d.value === "function") {
        const fn = d.value;
        Object.defineProperty(proto, name, { ...d, value: function (...a) { bump(); return fn.apply(this, a); } });
      }
    }
  };
  watch(HTMLInputElement.prototype, ["value", "checked", "indeterminate", "valueAsNumber", "valueAsDate",
                                     "stepUp", "stepDown", "setRangeText"]);
  watch(HTMLTextAreaElement.prototype, ["value", "setRangeText"]);
  watch(HTMLSelectElement.prototype, ["value", "selectedIndex"]);
  watch(HTMLOptionElement.prototype, ["selected"]);
  const topLevel = (text, isSep) => {
    const parts = []; let depth = 0, quote = null, start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote) { if (c === "\\") i++; else if (c === quote) quote = null; continue; }
      if (c === '"' || c === "'") quote = c;
      else if (c === "(" || c === "[") depth++;
      else if (c === ")" || c === "]") depth--;
      else if (depth === 0 && isSep(text, i)) { parts.push(text.slice(start, i)); start = i + 1; }
    }
    parts.push(text.slice(start));
    return parts;
  };
  const subjects = (selector) => {
    const out = [];
    for (const complex of topLevel(selector, (t, i) => t[i] === ",")) {
      if (!complex.includes(":hover")) continue;
      for (const compound of topLevel(complex, (t, i) => " >+~\n\t".includes(t[i]))) {
        if (!compound.includes(":hover")) continue;
        if (/\([^)]*:hover/.test(compound) || compound.includes("&")) return null;
        const bare = compound.replace(/::?[\w-]+(\((?:[^()]|\([^()]*\))*\))?/g, "").trim();
        out.push(bare || "*");
      }
    }
    return out;
  };
  // What the page's style sheets say: the subjects of its `:hover` rules, as one selector
  // ("*": any element), and whether any rule loads an image (`url(`), which may animate.
  // Read once per sheet (kept while its rule count holds: a sheet whose text changes is a
  // new sheet), so a move or a check costs a lookup per sheet, not a walk of its rules.
  const perSheet = new WeakMap();
  const readSheet = (sheet) => {
    let rules;
    try { rules = sheet.cssRules; } catch (e) { return { hover: ["*"], urls: true, count: -1 }; }
    const count = rules ? rules.length : 0;
    const known = perSheet.get(sheet);
    if (known && known.count === count) return known;
    const found = new Set();
    let urls = false;
    const scan = (list) => {
      for (const rule of list) {
        if (rule.styleSheet) {
          const inner = readSheet(rule.styleSheet);
          for (const x of inner.hover) found.add(x);
          urls = urls || inner.urls;
          continue;
        }
        const text = rule.cssText;
        if (!(rule instanceof CSSFontFaceRule) && text.includes("url(")) urls = true;
        if (!text.includes(":hover")) continue;
        if (rule.selectorText !== undefined) {
          const subs = rule.cssRules && rule.cssRules.length ? null : subjects(rule.selectorText);
          if (subs === null) found.add("*");
          else for (const x of subs) found.add(x);
        } else if (rule.cssRules) scan(rule.cssRules);
      }
    };
    if (rules) scan(rules);
    const facts = { hover: Array.from(found), urls, count };
    perSheet.set(sheet, facts);
    return facts;
  };
  const sheetFacts = () => {
    const hover = new Set();
    let urls = false;
    for (const list of [document.styleSheets, document.adoptedStyleSheets || []]) {
      for (const sheet of list) {
        const facts = readSheet(sheet);
        for (const x of facts.hover) hover.add(x);
        urls = urls || facts.urls;
      }
    }
    return { hover: hover.has("*") ? "*" : Array.from(hover).join(","), urls };
  };
  const chain = (node) => {
    const out = [];
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) out.push(n);
    return out;
  };
  // Whether an element of `a`'s chain or `b`'s, and not both, matches `selector`.
  const changedMatch = (a, b, selector) => {
    if (!selector) return false;
    if (selector === "*") return true;
    const one = chain(a), two = chain(b);
    const common = new Set(one.filter((n) => two.includes(n)));
    try {
      for (const el of [...one, ...two]) if (!common.has(el) && el.matches(selector)) return true;
    } catch (err) { return true; }
    return false;
  };
  document.addEventListener("mouseover", (e) => {
    const hover = sheetFacts().hover;
    if (hover && (e.composedPath()[0] !== e.target || changedMatch(e.target, e.relatedTarget, hover))) bump();
  }, true);

  // The screen version: the content version plus `paint`, bumped by what changes the
  // screen but not the tree. `s.screen()` answers null while the screen may change with no
  // event at all (something animates, a caret blinks, an image or font is still coming).
  s.paint = 0;
  const repaint = () => { s.paint++; };
  for (const type of ["animationstart", "animationiteration", "animationend", "animationcancel", "transitionrun",
                      "transitionend", "transitioncancel", "load", "error", "toggle"]) {
    window.addEventListener(type, repaint, true);
  }
  if (document.fonts) document.fonts.addEventListener("loadingdone", repaint);
  let selectionShown = false;
  document.addEventListener("selectionchange", () => {
    const sel = document.getSelection();
    const shown = !!sel && !sel.isCollapsed;
    if (shown || selectionShown) repaint();
    selectionShown = shown;
  });
  // Controls the browser draws itself, which it draws differently under the pointer.
  const NATIVE = "input:not([type=hidden]),button,select,textarea,summary,video,audio,meter,progress";
  // What may change the screen on its own: media, frames, canvases, SVG animation, marquees.
  const MOVING = "img,picture,video,canvas,iframe,frame,embed,object,marquee,animate,animateMotion," +
                 "animateTransform,set,progress:indeterminate,[style*='url(']";
  const CARET = "textarea,input:not([type=checkbox],[type=radio],[type=button],[type=submit],[type=reset]," +
                "[type=image],[type=range],[type=color],[type=file],[type=hidden])";
  let lastHover = null;
  s.screen = () => {
    // The cheap reasons first; while one holds no capture is kept, so the pointer's element
    // need not be followed (the next kept capture compares with the element of its own check).
    if (document.fonts && document.fonts.status !== "loaded") return null;
    const active = document.activeElement;
    if (active && (active.isContentEditable || active.matches(CARET))) return null;
    if (document.querySelector(MOVING)) return null;
    if (document.getAnimations().some((a) => a.playState === "running" || a.pending)) return null;
    const facts = sheetFacts();
    if (facts.urls) return null;
    // The pointer's element can change without an event (the page's layout moved under
    // it): compare it with the last check's. (`:hover` alone matches only links in a
    // quirks-mode document: the `:not()` lifts that.)
    const hovered = document.querySelectorAll(":not(#cua-none):hover");
    const over = hovered.length ? hovered[hovered.length - 1] : null;
    if (over !== lastHover) {
      if (changedMatch(over, lastHover, NATIVE) || changedMatch(over, lastHover, facts.hover)) repaint();
      lastHover = over;
    }
    return s.version + ":" + s.paint;
  };
"""
