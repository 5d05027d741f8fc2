// Custom widgets of the settings console.
//
// <duration-picker name value options aria-labelledby>: a form-associated custom
// element whose segmented buttons live in an open shadow root. Mouse: click a segment.
// Keyboard: it is one tab stop; arrows move and choose (radio-group semantics). Its
// value is submitted with the surrounding form through ElementInternals.
class DurationPicker extends HTMLElement {
  static formAssociated = true;
  constructor() {
    super();
    this._internals = this.attachInternals();
  }
  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: "open" });
    const options = (this.getAttribute("options") || "").split(",").map((x) => parseInt(x, 10)).filter((x) => !isNaN(x));
    const german = document.documentElement.lang === "de-DE";
    const label = (m) => (m < 60 ? `${m} ${german ? "Min." : "min"}` : `${m / 60} ${german ? "Std." : "h"}`);
    root.innerHTML = `<style>
      :host{display:inline-block}
      .seg{display:inline-flex;border:1px solid #8c959f;border-radius:6px;overflow:hidden}
      button{font:14px "DejaVu Sans",sans-serif;border:0;border-right:1px solid #d0d7de;background:#fff;padding:6px 14px;cursor:pointer;color:#1d232a}
      button:last-child{border-right:0}
      button[aria-checked=true]{background:#1f6feb;color:#fff}
      button:focus-visible{outline:2px solid #0969da;outline-offset:-3px}
    </style><div class="seg" role="radiogroup"></div>`;
    const seg = root.querySelector(".seg");
    const labelledBy = this.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = document.getElementById(labelledBy);
      if (text) seg.setAttribute("aria-label", text.textContent);
    }
    for (const m of options) {
      const b = document.createElement("button");
      b.type = "button";
      b.setAttribute("role", "radio");
      b.dataset.value = String(m);
      b.textContent = label(m);
      seg.appendChild(b);
    }
    this._buttons = [...seg.querySelectorAll("button")];
    seg.addEventListener("click", (e) => { const b = e.target.closest("button"); if (b) this.value = b.dataset.value; });
    seg.addEventListener("keydown", (e) => {
      const i = this._buttons.findIndex((b) => b.dataset.value === this.value);
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
      if (step === undefined) return;
      e.preventDefault();
      const next = this._buttons[(i + step + this._buttons.length) % this._buttons.length];
      this.value = next.dataset.value;
      next.focus();
    });
    this.value = this.getAttribute("value") || (options[0] !== undefined ? String(options[0]) : "");
  }
  get name() { return this.getAttribute("name"); }
  get value() { return this._value; }
  set value(v) {
    this._value = String(v);
    this._internals.setFormValue(this._value);
    for (const b of this._buttons || []) {
      const on = b.dataset.value === this._value;
      b.setAttribute("aria-checked", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
    }
    this.dispatchEvent(new Event("change", { bubbles: true }));
  }
}
customElements.define("duration-picker", DurationPicker);

// [data-dropdown]: a select-only combobox (button + listbox) writing a hidden input.
// Mouse: click the button, click an option. Keyboard: Enter/Space/ArrowDown opens,
// arrows move, Enter/Space chooses, Escape closes, typing a letter jumps to a match.
for (const dd of document.querySelectorAll("[data-dropdown]")) {
  const button = dd.querySelector(".dropdown-button");
  const list = dd.querySelector("[role=listbox]");
  const hidden = dd.querySelector("input[type=hidden]");
  const options = [...list.querySelectorAll("[role=option]")];
  let active = Math.max(0, options.findIndex((o) => o.dataset.value === hidden.value));
  const mark = (i) => {
    active = i;
    options.forEach((o, j) => o.classList.toggle("active", j === i));
    button.setAttribute("aria-activedescendant", options[i].id);
    options[i].scrollIntoView({ block: "nearest" });
  };
  const open = () => { list.hidden = false; button.setAttribute("aria-expanded", "true"); mark(active); };
  const close = () => { list.hidden = true; button.setAttribute("aria-expanded", "false"); button.removeAttribute("aria-activedescendant"); };
  const choose = (i) => {
    options.forEach((o, j) => o.setAttribute("aria-selected", j === i ? "true" : "false"));
    hidden.value = options[i].dataset.value;
    dd.querySelector(".dropdown-value").textContent = options[i].textContent;
    active = i;
    close();
    button.focus();
  };
  button.addEventListener("click", () => (list.hidden ? open() : close()));
  button.addEventListener("keydown", (e) => {
    if (list.hidden) {
      if (["Enter", " ", "ArrowDown", "ArrowUp"].includes(e.key)) { e.preventDefault(); open(); }
      return;
    }
    if (e.key === "ArrowDown") { e.preventDefault(); mark(Math.min(active + 1, options.length - 1)); }
    else if (e.key === "ArrowUp") { e.preventDefault(); mark(Math.max(active - 1, 0)); }
    else if (e.key === "Home") { e.preventDefault(); mark(0); }
    else if (e.key === "End") { e.preventDefault(); mark(options.length - 1); }
    else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(active); }
    else if (e.key === "Escape" || e.key === "Tab") { close(); }
    else if (e.key.length === 1) {
      const k = e.key.toLowerCase();
      const i = options.findIndex((o, j) => j > active && o.textContent.toLowerCase().startsWith(k));
      const j = i >= 0 ? i : options.findIndex((o) => o.textContent.toLowerCase().startsWith(k));
      if (j >= 0) mark(j);
    }
  });
  for (const [i, o] of options.entries()) {
    o.addEventListener("mousedown", (e) => e.preventDefault());
    o.addEventListener("click", () => choose(i));
  }
  document.addEventListener("mousedown", (e) => { if (!list.hidden && !dd.contains(e.target)) close(); });
}
