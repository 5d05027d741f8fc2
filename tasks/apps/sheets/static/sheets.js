// Spreadsheet grid: selection, keyboard navigation and in-cell editing.
// Arrows move; Enter or F2 edits (Enter commits and moves down, Tab commits and moves
// right, Escape cancels); typing a character starts editing with that character;
// Delete/Backspace clears. Click selects, double-click edits, the formula bar edits too.
(() => {
  const grid = document.getElementById("grid");
  if (!grid) return;
  const sheetId = grid.dataset.sheet;
  const raws = JSON.parse(document.getElementById("cells-data").textContent);
  const formula = document.getElementById("formula");
  const namebox = document.getElementById("namebox");
  const letters = (n) => { let s = ""; while (n) { const m = (n - 1) % 26; s = String.fromCharCode(65 + m) + s; n = Math.floor((n - 1) / 26); } return s; };
  const maxCol = grid.querySelectorAll("thead th.colhead").length;
  const maxRow = grid.querySelectorAll("tbody tr").length;
  let sel = { r: 1, c: 1 };
  let editing = null; // {td, input, original}
  const refOf = (p) => letters(p.c) + p.r;
  const td = (p) => grid.querySelector(`td[data-ref="${refOf(p)}"]`);
  const parseRef = (s) => {
    const m = /^\s*\$?([A-Za-z]{1,2})\$?(\d+)\s*$/.exec(s);
    if (!m) return null;
    let c = 0; for (const ch of m[1].toUpperCase()) c = c * 26 + ch.charCodeAt(0) - 64;
    const r = parseInt(m[2], 10);
    return r >= 1 && r <= maxRow && c >= 1 && c <= maxCol ? { r, c } : null;
  };
  function select(p, focusGrid = true) {
    sel = { r: Math.min(Math.max(p.r, 1), maxRow), c: Math.min(Math.max(p.c, 1), maxCol) };
    for (const el of grid.querySelectorAll("td.selected")) { el.classList.remove("selected"); el.removeAttribute("aria-selected"); }
    const cell = td(sel);
    cell.classList.add("selected");
    cell.setAttribute("aria-selected", "true");
    grid.setAttribute("aria-activedescendant", "");
    namebox.value = refOf(sel);
    formula.value = raws[refOf(sel)] || "";
    cell.scrollIntoView({ block: "nearest", inline: "nearest" });
    if (focusGrid) grid.focus({ preventScroll: true });
  }
  function startEdit(initial) {
    const cell = td(sel);
    const input = document.createElement("input");
    input.className = "cell-input";
    input.setAttribute("aria-label", (grid.dataset.editLabel || "Edit") + " " + refOf(sel));
    input.value = initial !== undefined ? initial : (raws[refOf(sel)] || "");
    editing = { td: cell, input, ref: refOf(sel) };
    cell.classList.add("editing");
    cell.textContent = "";
    cell.appendChild(input);
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
    input.addEventListener("input", () => { formula.value = input.value; });
    input.addEventListener("keydown", (e) => {
      e.stopPropagation(); // the grid's own key handling is for navigation, not editing
      if (e.key === "Enter") { e.preventDefault(); commit(input.value, { r: sel.r + (e.shiftKey ? -1 : 1), c: sel.c }); }
      else if (e.key === "Tab") { e.preventDefault(); commit(input.value, { r: sel.r, c: sel.c + (e.shiftKey ? -1 : 1) }); }
      else if (e.key === "Escape") { e.preventDefault(); cancel(); }
    });
    input.addEventListener("blur", () => { if (editing && editing.input === input) commit(input.value, null); });
  }
  function cancel() {
    if (!editing) return;
    const { td: cell } = editing;
    editing = null;
    cell.classList.remove("editing");
    render(cell.dataset.ref);
    select(sel);
  }
  let lastCells = null;
  function render(ref) {
    const cell = grid.querySelector(`td[data-ref="${ref}"]`);
    if (!cell || cell.classList.contains("editing")) return;
    const info = lastCells ? lastCells[ref] : null;
    const shown = info ? info.display : (raws[ref] || "");
    cell.textContent = shown;
    cell.classList.toggle("num", !!info && typeof info.value === "number");
    cell.classList.toggle("err", shown.startsWith("#"));
  }
  async function save(ref, raw) {
    grid.setAttribute("aria-busy", "true");
    const resp = await fetch(`/api/sheets/${sheetId}/cells`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ref, raw }),
    });
    const data = await resp.json();
    if (!resp.ok) { grid.removeAttribute("aria-busy"); alert(data.error || grid.dataset.saveError || "Could not save"); return; }
    lastCells = data.cells;
    for (const k of Object.keys(raws)) if (!(k in data.cells)) delete raws[k];
    for (const [k, v] of Object.entries(data.cells)) raws[k] = v.raw;
    for (const cell of grid.querySelectorAll("td.cell")) render(cell.dataset.ref);
    if (!editing) formula.value = raws[refOf(sel)] || "";
    grid.removeAttribute("aria-busy");
  }
  function commit(value, next) {
    if (!editing) return;
    const { td: cell, ref } = editing;
    editing = null;
    cell.classList.remove("editing");
    const changed = (raws[ref] || "") !== value;
    if (changed) { if (value === "") delete raws[ref]; else raws[ref] = value; }
    cell.textContent = value.startsWith("=") ? "…" : value;
    if (next) select(next); else select(sel, false);
    if (changed) save(ref, value); else render(ref);
  }
  grid.addEventListener("mousedown", (e) => {
    const cell = e.target.closest("td.cell");
    if (!cell || cell.classList.contains("editing")) return;
    e.preventDefault();
    if (editing) commit(editing.input.value, null);
    select(parseRef(cell.dataset.ref));
  });
  grid.addEventListener("dblclick", (e) => {
    const cell = e.target.closest("td.cell");
    if (cell && !editing) { select(parseRef(cell.dataset.ref)); startEdit(); }
  });
  grid.addEventListener("keydown", (e) => {
    if (editing) return;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key in moves) { e.preventDefault(); const [dr, dc] = moves[e.key]; select({ r: sel.r + dr, c: sel.c + dc }); }
    else if (e.key === "Tab") { e.preventDefault(); select({ r: sel.r, c: sel.c + (e.shiftKey ? -1 : 1) }); }
    else if (e.key === "Enter" || e.key === "F2") { e.preventDefault(); startEdit(); }
    else if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      const ref = refOf(sel);
      if (raws[ref] !== undefined) { delete raws[ref]; td(sel).textContent = ""; formula.value = ""; save(ref, ""); }
    } else if (e.key === "Home") { e.preventDefault(); select({ r: e.ctrlKey ? 1 : sel.r, c: 1 }); }
    else if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); startEdit(e.key); }
  });
  formula.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      const ref = refOf(sel), value = formula.value;
      if ((raws[ref] || "") !== value) { if (value === "") delete raws[ref]; else raws[ref] = value; save(ref, value); }
      select({ r: sel.r + 1, c: sel.c });
    } else if (e.key === "Escape") { e.preventDefault(); select(sel); }
  });
  namebox.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); const p = parseRef(namebox.value); if (p) select(p); else namebox.value = refOf(sel); }
  });
  const renameOpen = document.getElementById("rename-open");
  renameOpen.addEventListener("click", () => {
    const f = document.getElementById("rename-form");
    f.hidden = false; renameOpen.hidden = true;
    const i = document.getElementById("rename-input"); i.focus(); i.select();
  });
  select({ r: 1, c: 1 }, false);
})();
