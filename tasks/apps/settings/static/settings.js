// Switches save on toggle (the switch flips once the server has stored the value);
// switches with data-confirm ask first when turning OFF. Modals: typed confirmation
// for deleting a user, and a shared confirm modal for API key actions.
(() => {
  const modal = document.getElementById("confirm-modal");
  const ask = (text) => new Promise((resolve) => {
    if (!modal) { resolve(true); return; }
    document.getElementById("confirm-text").textContent = text;
    modal.hidden = false;
    const yes = document.getElementById("confirm-yes"), no = document.getElementById("confirm-no");
    no.focus();
    const done = (answer) => { modal.hidden = true; yes.onclick = no.onclick = null; modal.onkeydown = null; resolve(answer); };
    yes.onclick = () => done(true);
    no.onclick = () => done(false);
    modal.onkeydown = (e) => { if (e.key === "Escape") done(false); };
  });
  for (const sw of document.querySelectorAll("button[role=switch]")) {
    sw.addEventListener("click", async () => {
      if (sw.getAttribute("aria-busy") === "true") return;
      const next = sw.getAttribute("aria-checked") !== "true";
      if (!next && sw.dataset.confirm && !(await ask(sw.dataset.confirm))) { sw.focus(); return; }
      sw.setAttribute("aria-busy", "true");
      try {
        const resp = await fetch("/api/settings", { method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ key: sw.dataset.key, value: next }) });
        if (resp.ok) sw.setAttribute("aria-checked", next ? "true" : "false");
      } finally {
        sw.removeAttribute("aria-busy");
        sw.focus();
      }
    });
  }
  const del = document.getElementById("delete-modal");
  if (del) {
    const input = document.getElementById("delete-confirm-input");
    const confirmBtn = document.getElementById("delete-confirm");
    document.getElementById("delete-open").addEventListener("click", () => { del.hidden = false; input.focus(); });
    document.getElementById("delete-cancel").addEventListener("click", () => { del.hidden = true; input.value = ""; confirmBtn.disabled = true; });
    input.addEventListener("input", () => { confirmBtn.disabled = input.value.trim().toLowerCase() !== input.dataset.expect; });
    del.addEventListener("keydown", (e) => { if (e.key === "Escape") del.hidden = true; });
  }
  const action = document.getElementById("action-modal");
  if (action) {
    for (const b of document.querySelectorAll(".confirm-open")) {
      b.addEventListener("click", () => {
        document.getElementById("action-text").textContent = b.dataset.text;
        document.getElementById("action-form").action = b.dataset.action;
        document.getElementById("action-yes").textContent = b.dataset.yes;
        action.hidden = false;
        document.getElementById("action-no").focus();
      });
    }
    document.getElementById("action-no").addEventListener("click", () => { action.hidden = true; });
    action.addEventListener("keydown", (e) => { if (e.key === "Escape") action.hidden = true; });
  }
})();
