"""What bumps a page's content version: the part of the settle init script that watches.

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
  let hoverRules = { key: null, selector: "" };
  const hoverSelector = () => {
    const key = document.styleSheets.length + ":" + s.version;
    if (hoverRules.key === key) return hoverRules.selector;
    const found = new Set();
    const scan = (rules) => {
      for (const rule of rules) {
        if (rule.styleSheet) { scanSheet(rule.styleSheet); continue; }
        if (rule.selectorText !== undefined && rule.selectorText.includes(":hover")) {
          const subs = subjects(rule.selectorText);
          if (subs === null) { found.add("*"); continue; }
          for (const x of subs) found.add(x);
        }
        if (rule.cssRules && rule.cssRules.length) {
          if (rule.selectorText !== undefined) { if (rule.cssText.includes(":hover")) found.add("*"); }
          else scan(rule.cssRules);
        }
      }
    };
    const scanSheet = (sheet) => {
      let rules;
      try { rules = sheet.cssRules; } catch (e) { found.add("*"); return; }
      if (rules) scan(rules);
    };
    for (const sheet of document.styleSheets) scanSheet(sheet);
    for (const sheet of document.adoptedStyleSheets || []) scanSheet(sheet);
    hoverRules = { key, selector: found.has("*") ? "*" : Array.from(found).join(",") };
    return hoverRules.selector;
  };
  const chain = (node) => {
    const out = [];
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) out.push(n);
    return out;
  };
  document.addEventListener("mouseover", (e) => {
    const selector = hoverSelector();
    if (!selector) return;
    if (selector === "*" || e.composedPath()[0] !== e.target) { bump(); return; }
    const entered = chain(e.target), left = chain(e.relatedTarget);
    const common = new Set(entered.filter((n) => left.includes(n)));
    try {
      for (const el of [...entered, ...left]) if (!common.has(el) && el.matches(selector)) { bump(); return; }
    } catch (err) { bump(); }
  }, true);
"""
