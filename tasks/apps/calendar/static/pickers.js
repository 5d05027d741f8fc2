// Time picker widget (the date picker is the shared /static/cua/datepicker.js).
// Focusing or clicking the field opens a list of 15-minute slots; typing filters it, arrows
// move, Enter picks, Escape closes; typed HH:MM is accepted as is.
(function () {
  const pad = (n) => String(n).padStart(2, "0");

  const SLOTS = [];
  for (let h = 0; h < 24; h++) for (let m = 0; m < 60; m += 15) SLOTS.push(`${pad(h)}:${pad(m)}`);

  function setupTime(wrap) {
    const input = wrap.querySelector("input");
    const list = wrap.querySelector(".tp-list");
    let active = -1, navigated = false;
    const items = () => Array.from(list.children);
    function fill(filter) {
      const typed = filter.replace(/[^0-9:]/g, "");
      const shown = typed && !SLOTS.includes(typed) ? SLOTS.filter((s) => s.startsWith(typed) || s.replace(":", "").startsWith(typed)) : SLOTS;
      list.innerHTML = shown.map((s, i) => `<li role="option" id="${input.id}-opt-${i}" data-value="${s}" aria-selected="${s === input.value}">${s}</li>`).join("");
    }
    function highlight(i) {
      const its = items(); if (!its.length) return;
      active = Math.max(0, Math.min(its.length - 1, i));
      its.forEach((el, j) => el.classList.toggle("active", j === active));
      input.setAttribute("aria-activedescendant", its[active].id);
      its[active].scrollIntoView({ block: "nearest" });
    }
    function open(filter) {
      fill(filter);
      list.hidden = false; input.setAttribute("aria-expanded", "true");
      const its = items();
      let i = its.findIndex((el) => el.dataset.value >= (input.value || "09:00"));
      highlight(i < 0 ? 0 : i);
    }
    function close() { navigated = false; list.hidden = true; input.setAttribute("aria-expanded", "false"); input.removeAttribute("aria-activedescendant"); active = -1; }
    function pick(i) {
      const el = items()[i]; if (!el) return;
      input.value = el.dataset.value; input.dispatchEvent(new Event("change", { bubbles: true })); close();
    }
    input.addEventListener("focus", () => open(""));
    input.addEventListener("click", () => { if (list.hidden) open(""); });
    input.addEventListener("input", () => { navigated = false; open(input.value); });
    input.addEventListener("blur", () => close());
    input.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown") { e.preventDefault(); navigated = true; if (list.hidden) open(""); else highlight(active + 1); }
      else if (e.key === "ArrowUp") { e.preventDefault(); navigated = true; highlight(active - 1); }
      else if (e.key === "Enter" && !list.hidden && navigated && active >= 0) { e.preventDefault(); pick(active); }
      else if (e.key === "Escape" || e.key === "Tab") close();
    });
    list.addEventListener("mousedown", (e) => e.preventDefault());
    list.addEventListener("click", (e) => { const li = e.target.closest("li"); if (li) pick(items().indexOf(li)); });
  }

  document.querySelectorAll(".timepicker").forEach(setupTime);
})();
