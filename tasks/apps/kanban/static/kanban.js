// Kanban board: move cards by dragging them with the mouse (pointer events) or with
// Alt+Arrow keys on a focused card. A move is shown at once, saved with POST
// /api/cards/{id}/move, and the board is marked busy (aria-busy) until the server has it.
// The move names the card it now follows (not an index), so it is right on a filtered board too.
(function () {
  const board = document.querySelector(".kboard");
  const status = document.getElementById("kstatus");
  const THRESHOLD = 5;

  // `via`: the gesture that made the move ("drag" or "keyboard"), kept in the app's activity log.
  async function save(card, list, via) {
    const prev = card.previousElementSibling && card.previousElementSibling.closest(".kcard");
    board.setAttribute("aria-busy", "true");
    card.classList.add("saving");
    try {
      const res = await fetch(`/api/cards/${card.dataset.id}/move`, {
        method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ column_id: Number(list.dataset.columnId), after_id: prev ? Number(prev.dataset.id) : null, via }),
      });
      if (!res.ok) throw new Error(await res.text());
      const saved = (await res.json()).card;
      status.textContent = (status.dataset.moved || "Moved “{title}” to {column}, position {position}.")
        .replace("{title}", () => card.dataset.title).replace("{column}", () => list.closest(".kcol").dataset.column)
        .replace("{position}", String(saved.position + 1));
      updateCounts();
    } catch (err) {
      status.textContent = status.dataset.failed || "Could not move the card; reloading.";
      location.reload();
    } finally {
      card.classList.remove("saving");
      board.removeAttribute("aria-busy");
    }
  }
  function updateCounts() {
    document.querySelectorAll(".kcol").forEach((col) => {
      const n = col.querySelectorAll(".kcard").length;
      const badge = col.querySelector("h2 .muted");
      if (badge && !document.querySelector('.kfilter input[name="q"]').value) badge.textContent = n;
    });
  }

  // --- pointer drag ---
  let drag = null;
  let suppressClick = false;
  function listAt(x, y) {
    const el = document.elementFromPoint(x, y);
    const col = el && el.closest(".kcol");
    return col ? col.querySelector(".klist") : null;
  }
  function placeholderIndex(list, y) {
    // Below the list's visible bottom (e.g. over "+ Add a card"): the end, even when the
    // list is scrolled and its hidden cards' boxes lie further down.
    if (y > list.getBoundingClientRect().bottom) return null;
    const cards = Array.from(list.querySelectorAll(".kcard:not(.dragging)"));
    for (let i = 0; i < cards.length; i++) {
      const r = cards[i].getBoundingClientRect();
      if (y < r.top + r.height / 2) return cards[i];
    }
    return null;
  }
  if (board) {
    board.addEventListener("pointerdown", (e) => {
      const card = e.target.closest(".kcard");
      if (!card || e.button !== 0) return;
      drag = { card, startX: e.clientX, startY: e.clientY, started: false, pointerId: e.pointerId };
    });
    document.addEventListener("pointermove", (e) => {
      if (!drag) return;
      if (!drag.started) {
        if (Math.hypot(e.clientX - drag.startX, e.clientY - drag.startY) < THRESHOLD) return;
        const r = drag.card.getBoundingClientRect();
        drag.started = true;
        drag.offsetX = drag.startX - r.left; drag.offsetY = drag.startY - r.top;
        drag.ghost = drag.card.cloneNode(true);
        drag.ghost.classList.add("ghost");
        drag.ghost.style.width = r.width + "px";
        document.body.appendChild(drag.ghost);
        drag.placeholder = document.createElement("div");
        drag.placeholder.className = "placeholder";
        drag.placeholder.style.height = r.height + "px";
        drag.card.after(drag.placeholder);
        drag.card.classList.add("dragging");
        document.body.classList.add("is-dragging");
      }
      e.preventDefault();
      drag.ghost.style.left = e.clientX - drag.offsetX + "px";
      drag.ghost.style.top = e.clientY - drag.offsetY + "px";
      const list = listAt(e.clientX, e.clientY);
      if (list) {
        const before = placeholderIndex(list, e.clientY);
        if (before) list.insertBefore(drag.placeholder, before); else list.appendChild(drag.placeholder);
      }
    });
    document.addEventListener("pointerup", (e) => {
      if (!drag) return;
      const d = drag; drag = null;
      if (!d.started) return;
      d.ghost.remove();
      document.body.classList.remove("is-dragging");
      d.card.classList.remove("dragging");
      const list = d.placeholder.parentElement;
      d.placeholder.replaceWith(d.card);
      suppressClick = true;
      setTimeout(() => { suppressClick = false; }, 0);  // the click (if any) is dispatched right after this pointerup
      save(d.card, list, "drag");
    });
    document.addEventListener("pointercancel", () => {
      if (!drag) return;
      if (drag.started) { drag.ghost.remove(); drag.placeholder.remove(); drag.card.classList.remove("dragging"); }
      document.body.classList.remove("is-dragging");
      drag = null;
    });
    // A drag may end with a click on the card: it must not open the card.
    board.addEventListener("click", (e) => {
      if (suppressClick) { e.preventDefault(); e.stopPropagation(); suppressClick = false; }
    }, true);
    board.addEventListener("dragstart", (e) => e.preventDefault());

    // --- keyboard moves ---
    board.addEventListener("keydown", (e) => {
      const card = e.target.closest(".kcard");
      if (!card || !e.altKey || !["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"].includes(e.key)) return;
      e.preventDefault();
      const list = card.parentElement;
      if (e.key === "ArrowUp" && card.previousElementSibling) list.insertBefore(card, card.previousElementSibling);
      else if (e.key === "ArrowDown" && card.nextElementSibling) card.nextElementSibling.after(card);
      else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
        const cols = Array.from(board.querySelectorAll(".klist"));
        const target = cols[cols.indexOf(list) + (e.key === "ArrowLeft" ? -1 : 1)];
        if (!target) return;
        target.appendChild(card);
      } else return;
      card.focus();
      save(card, card.parentElement, "keyboard");
    });
  }

  // --- modals ---
  const cardModal = document.getElementById("card-modal");
  document.addEventListener("click", (e) => {
    const opener = e.target.closest("[data-open]");
    if (opener) document.getElementById(opener.dataset.open).hidden = false;
    const closer = e.target.closest("[data-close]");
    if (closer) document.getElementById(closer.dataset.close).hidden = true;
    if (cardModal && e.target === cardModal) location.href = cardModal.dataset.closeHref;
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    const del = document.getElementById("delete-modal");
    if (del && !del.hidden) { del.hidden = true; return; }
    if (cardModal && !document.querySelector(".dp-pop")) location.href = cardModal.dataset.closeHref;
  });
  if (cardModal) {
    const title = document.getElementById("card-title");
    if (title) title.focus();
  }
})();
