// Notes editor: a contenteditable body with a formatting toolbar (mouse and keyboard),
// copied into the form on submit; folder rename reveal; delete confirm modal.
(() => {
  const editor = document.getElementById("editor");
  const form = document.getElementById("note-form");
  if (editor && form) {
    const blockCmds = { h1: "H1", h2: "H2", p: "P" };
    const run = (cmd) => {
      editor.focus();
      if (cmd in blockCmds) document.execCommand("formatBlock", false, blockCmds[cmd]);
      else document.execCommand(cmd, false, null);
      refresh();
    };
    const refresh = () => {
      for (const b of document.querySelectorAll(".tool")) {
        const cmd = b.dataset.cmd;
        let on = false;
        if (cmd in blockCmds) on = (document.queryCommandValue("formatBlock") || "").toLowerCase() === cmd;
        else on = document.queryCommandState(cmd);
        b.setAttribute("aria-pressed", on ? "true" : "false");
      }
    };
    for (const b of document.querySelectorAll(".tool")) {
      // Keep the editor's selection: a mousedown on a button would otherwise blur it.
      b.addEventListener("mousedown", (e) => e.preventDefault());
      b.addEventListener("click", () => run(b.dataset.cmd));
    }
    document.addEventListener("selectionchange", () => { if (document.activeElement === editor) refresh(); });
    editor.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") { e.preventDefault(); form.requestSubmit(); }
      if ((e.ctrlKey || e.metaKey) && e.altKey && (e.key === "1" || e.key === "2")) { e.preventDefault(); run("h" + e.key); }
      if ((e.ctrlKey || e.metaKey) && e.shiftKey && (e.key === "8" || e.key === "*")) { e.preventDefault(); run("insertUnorderedList"); }
      if ((e.ctrlKey || e.metaKey) && e.shiftKey && (e.key === "7" || e.key === "&")) { e.preventDefault(); run("insertOrderedList"); }
    });
    form.addEventListener("submit", () => { document.getElementById("body-input").value = editor.innerHTML; });
    document.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s" && document.activeElement !== editor) {
        e.preventDefault(); form.requestSubmit();
      }
    });
  }
  const pair = (openId, targetId, cancelId, focusId) => {
    const open = document.getElementById(openId), target = document.getElementById(targetId);
    if (!open || !target) return;
    open.addEventListener("click", () => { target.hidden = false; const f = document.getElementById(focusId); if (f) { f.focus(); if (f.select) f.select(); } });
    document.getElementById(cancelId).addEventListener("click", () => { target.hidden = true; open.focus(); });
    target.addEventListener("keydown", (e) => { if (e.key === "Escape") { target.hidden = true; open.focus(); } });
  };
  pair("rename-open", "rename-form", "rename-cancel", "rename-input");
  pair("delete-open", "delete-modal", "delete-cancel", "delete-confirm");
})();
