// Infinite scroll of the post list, votes, reply forms and the delete-comment modal.
(() => {
  const list = document.getElementById("post-list");
  const end = document.getElementById("feed-end");
  if (list && end) {
    let loading = false;
    const load = async () => {
      if (loading || list.dataset.more !== "1") return;
      loading = true;
      list.setAttribute("aria-busy", "true");
      const params = new URLSearchParams({ offset: list.dataset.offset, sort: list.dataset.sort });
      if (list.dataset.tag) params.set("tag", list.dataset.tag);
      try {
        const resp = await fetch(`/api/posts?${params}`);
        const data = await resp.json();
        list.insertAdjacentHTML("beforeend", data.html);
        list.dataset.offset = String(parseInt(list.dataset.offset, 10) + data.count);
        list.dataset.more = data.more ? "1" : "0";
        end.textContent = data.more ? end.dataset.loadingText : end.dataset.endText;
      } finally {
        loading = false;
        list.removeAttribute("aria-busy");
      }
      // The sentinel may still be in view after a short page: keep filling.
      const r = end.getBoundingClientRect();
      if (r.top < window.innerHeight + 200) load();
    };
    new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) load(); }, { rootMargin: "0px 0px 200px 0px" }).observe(end);
  }

  document.addEventListener("click", async (e) => {
    const btn = e.target.closest("button.vote");
    if (btn) {
      const box = btn.closest(".votes");
      if (box.getAttribute("aria-busy") === "true") return;
      box.setAttribute("aria-busy", "true");
      try {
        const resp = await fetch("/api/vote", { method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ kind: box.dataset.kind, id: parseInt(box.dataset.id, 10), value: parseInt(btn.dataset.value, 10) }) });
        if (resp.ok) {
          const data = await resp.json();
          const lang = document.documentElement.lang;
          box.querySelector(".score").textContent = lang === "en-US" ? String(data.score) : new Intl.NumberFormat(lang).format(data.score);
          box.querySelector(".up").setAttribute("aria-pressed", data.my_vote === 1 ? "true" : "false");
          box.querySelector(".down").setAttribute("aria-pressed", data.my_vote === -1 ? "true" : "false");
        }
      } finally {
        box.removeAttribute("aria-busy");
      }
      return;
    }
    const open = e.target.closest(".reply-open");
    if (open) {
      const form = document.getElementById(open.getAttribute("aria-controls"));
      form.hidden = !form.hidden;
      open.setAttribute("aria-expanded", form.hidden ? "false" : "true");
      if (!form.hidden) form.querySelector("textarea").focus();
      return;
    }
    const cancel = e.target.closest(".reply-cancel");
    if (cancel) {
      const form = cancel.closest("form");
      form.hidden = true;
      document.querySelector(`[aria-controls="${form.id}"]`).setAttribute("aria-expanded", "false");
      return;
    }
    const del = e.target.closest(".delete-open");
    if (del) {
      document.getElementById("delete-form").action = `/comments/${del.dataset.id}/delete`;
      document.getElementById("delete-modal").hidden = false;
      document.getElementById("delete-cancel").focus();
      return;
    }
    if (e.target.id === "delete-cancel") document.getElementById("delete-modal").hidden = true;
  });
  document.addEventListener("keydown", (e) => {
    const modal = document.getElementById("delete-modal");
    if (e.key === "Escape" && modal && !modal.hidden) modal.hidden = true;
  });
})();
