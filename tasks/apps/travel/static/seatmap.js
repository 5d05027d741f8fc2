// <seat-map>: an aircraft seat map in an open shadow root. Attributes: rows, letters
// (e.g. "ABCDEF", aisle after the middle), premium-rows, taken (comma-separated),
// value. Click a free seat or move with the arrow keys and press Enter/Space to choose
// it; the element fires a bubbling, composed `seat-change` event with {seat}.
class SeatMap extends HTMLElement {
  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: "open" });
    const rows = parseInt(this.getAttribute("rows") || "20", 10);
    const letters = this.getAttribute("letters") || "ABCDEF";
    const premium = parseInt(this.getAttribute("premium-rows") || "0", 10);
    const taken = new Set((this.getAttribute("taken") || "").split(",").filter(Boolean));
    this._value = this.getAttribute("value") || "";
    const aisle = Math.floor(letters.length / 2);
    const style = document.createElement("style");
    style.textContent = `
      :host{display:block}
      .plane{display:inline-block;padding:10px 16px;border:2px solid var(--border);border-radius:40px 40px 12px 12px;background:var(--surface-2)}
      .row{display:flex;align-items:center;gap:4px;margin:3px 0}
      .num{width:22px;text-align:right;font-size:11px;color:var(--text-muted);margin-right:4px}
      .aisle{width:18px}
      .head{display:flex;gap:4px;margin-left:30px;font-size:11px;color:var(--text-muted)}
      .head span{width:26px;text-align:center}
      button{width:26px;height:24px;padding:0;border:1px solid var(--text-muted);border-radius:5px 5px 3px 3px;background:var(--surface);font:11px var(--font-ui);cursor:pointer;color:var(--text)}
      button.premium{background:color-mix(in srgb,var(--warning) 16%,var(--surface));border-color:var(--warning)}
      button:disabled{background:var(--border);border-color:var(--border);color:var(--text-muted);cursor:not-allowed}
      button[aria-checked=true]{background:var(--accent);border-color:var(--accent);color:var(--on-accent);font-weight:bold}
      button:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
      .legend{display:flex;gap:14px;font-size:12px;margin-top:8px;color:var(--text-muted)}
      .legend i{display:inline-block;width:12px;height:12px;border:1px solid var(--text-muted);border-radius:3px;vertical-align:-2px;margin-right:4px}
      @media (max-width:600px){.plane{padding:8px 4px}.num{width:16px;margin-right:2px}.aisle{width:10px}.head{margin-left:20px}
        .head span,button{width:44px}button{height:44px;font-size:13px}.legend{flex-wrap:wrap}}`;
    const plane = document.createElement("div");
    plane.className = "plane";
    plane.setAttribute("role", "radiogroup");
    // the page's words for the map (its locale); English without them
    const words = { seats: "Seats", seat: "Seat", legroom: "extra legroom", taken: "taken", free: "Free",
      extra: "Extra legroom", takenKey: "Taken", selected: "Selected", ...JSON.parse(this.getAttribute("data-words") || "{}") };
    plane.setAttribute("aria-label", words.seats);
    const head = document.createElement("div");
    head.className = "head";
    for (let i = 0; i < letters.length; i++) {
      if (i === aisle) { const a = document.createElement("span"); a.style.width = "18px"; head.appendChild(a); }
      const s = document.createElement("span"); s.textContent = letters[i]; head.appendChild(s);
    }
    plane.appendChild(head);
    for (let r = 1; r <= rows; r++) {
      const row = document.createElement("div");
      row.className = "row";
      const num = document.createElement("span"); num.className = "num"; num.textContent = r; row.appendChild(num);
      for (let i = 0; i < letters.length; i++) {
        if (i === aisle) { const a = document.createElement("span"); a.className = "aisle"; row.appendChild(a); }
        const seat = `${r}${letters[i]}`;
        const b = document.createElement("button");
        b.type = "button";
        b.className = "seat" + (r <= premium ? " premium" : "");
        b.dataset.seat = seat; b.dataset.row = r; b.dataset.col = i;
        b.setAttribute("role", "radio");
        b.setAttribute("aria-label", `${words.seat} ${seat}${r <= premium ? `, ${words.legroom}` : ""}${taken.has(seat) ? `, ${words.taken}` : ""}`);
        b.setAttribute("aria-checked", seat === this._value ? "true" : "false");
        b.tabIndex = -1;
        b.textContent = letters[i];
        if (taken.has(seat)) b.disabled = true;
        row.appendChild(b);
      }
      plane.appendChild(row);
    }
    const legend = document.createElement("div");
    legend.className = "legend";
    legend.innerHTML = '<span><i></i></span><span><i style="background:color-mix(in srgb,var(--warning) 16%,var(--surface));border-color:var(--warning)"></i></span>' +
      '<span><i style="background:var(--border);border-color:var(--border)"></i></span><span><i style="background:var(--accent)"></i></span>';
    [words.free, words.extra, words.takenKey, words.selected].forEach((w, i) => legend.children[i].append(w));
    root.append(style, plane, legend);
    this._seats = [...root.querySelectorAll("button.seat")];
    const first = this._seats.find((b) => b.dataset.seat === this._value) || this._seats.find((b) => !b.disabled);
    if (first) first.tabIndex = 0;
    plane.addEventListener("click", (e) => {
      const b = e.target.closest("button.seat");
      if (b && !b.disabled) this.choose(b);
    });
    plane.addEventListener("keydown", (e) => this._key(e));
  }
  get value() { return this._value; }
  choose(button) {
    for (const b of this._seats) b.setAttribute("aria-checked", b === button ? "true" : "false");
    this._value = button.dataset.seat;
    this.setAttribute("value", this._value);
    this._focus(button);
    this.dispatchEvent(new CustomEvent("seat-change", { detail: { seat: this._value }, bubbles: true, composed: true }));
  }
  _focus(button) {
    for (const b of this._seats) b.tabIndex = -1;
    button.tabIndex = 0;
    button.focus();
  }
  _key(e) {
    const cur = e.target.closest("button.seat");
    if (!cur) return;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); if (!cur.disabled) this.choose(cur); return; }
    if (!(e.key in moves)) return;
    e.preventDefault();
    const [dr, dc] = moves[e.key];
    let r = +cur.dataset.row, c = +cur.dataset.col;
    // Skip over taken seats in the direction of travel, so every free seat is reachable.
    for (;;) {
      r += dr; c += dc;
      const next = this._seats.find((b) => +b.dataset.row === r && +b.dataset.col === c);
      if (!next) return;
      if (!next.disabled) { this._focus(next); return; }
    }
  }
}
customElements.define("seat-map", SeatMap);
