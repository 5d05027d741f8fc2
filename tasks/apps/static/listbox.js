// A custom single-select dropdown built from divs/lists (role=listbox), as many real sites
// have instead of a native <select>. Mouse: click the button, click an option. Keyboard:
// Enter/Space/ArrowDown open it; arrows, Home/End and type-ahead move; Enter/Space pick;
// Escape/Tab close. The chosen value lands in the hidden input named by data-name.
(function () {
  function setup(box) {
    const button = box.querySelector(".lb-button");
    const list = box.querySelector(".lb-options");
    const input = box.querySelector('input[type="hidden"]');
    const value = box.querySelector(".lb-value");
    const options = () => Array.from(list.querySelectorAll('[role="option"]'));
    let active = -1;
    let typed = "", typedAt = 0;

    function highlight(i) {
      const opts = options();
      if (!opts.length) return;
      active = Math.max(0, Math.min(opts.length - 1, i));
      opts.forEach((o, j) => o.classList.toggle("active", j === active));
      list.setAttribute("aria-activedescendant", opts[active].id);
      opts[active].scrollIntoView({ block: "nearest" });
    }
    function open() {
      list.hidden = false;
      button.setAttribute("aria-expanded", "true");
      const sel = options().findIndex((o) => o.getAttribute("aria-selected") === "true");
      highlight(sel < 0 ? 0 : sel);
      list.focus();
    }
    function close(refocus) {
      list.hidden = true;
      button.setAttribute("aria-expanded", "false");
      if (refocus) button.focus();
    }
    function choose(i) {
      const opt = options()[i];
      if (!opt) return;
      options().forEach((o) => o.setAttribute("aria-selected", o === opt ? "true" : "false"));
      input.value = opt.dataset.value;
      value.textContent = opt.textContent;
      close(true);
      box.dispatchEvent(new CustomEvent("change", { bubbles: true, detail: { value: input.value } }));
      if (box.dataset.autosubmit && box.closest("form")) box.closest("form").requestSubmit();
    }
    button.addEventListener("click", () => (list.hidden ? open() : close(true)));
    button.addEventListener("keydown", (e) => {
      if (["ArrowDown", "ArrowUp", "Enter", " "].includes(e.key)) { e.preventDefault(); open(); }
    });
    list.addEventListener("keydown", (e) => {
      const n = options().length;
      if (e.key === "ArrowDown") { e.preventDefault(); highlight(active + 1); }
      else if (e.key === "ArrowUp") { e.preventDefault(); highlight(active - 1); }
      else if (e.key === "Home") { e.preventDefault(); highlight(0); }
      else if (e.key === "End") { e.preventDefault(); highlight(n - 1); }
      else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(active); }
      else if (e.key === "Escape") { e.preventDefault(); close(true); }
      else if (e.key === "Tab") { close(false); }
      else if (e.key.length === 1) {
        const now = Date.now();
        typed = (now - typedAt > 800 ? "" : typed) + e.key.toLowerCase();
        typedAt = now;
        const i = options().findIndex((o) => o.textContent.toLowerCase().startsWith(typed));
        if (i >= 0) highlight(i);
      }
    });
    list.addEventListener("mousemove", (e) => {
      const opt = e.target.closest('[role="option"]');
      if (opt) highlight(options().indexOf(opt));
    });
    list.addEventListener("click", (e) => {
      const opt = e.target.closest('[role="option"]');
      if (opt) choose(options().indexOf(opt));
    });
    document.addEventListener("mousedown", (e) => {
      if (!list.hidden && !box.contains(e.target)) close(false);
    });
  }
  document.querySelectorAll(".listbox").forEach(setup);
})();
