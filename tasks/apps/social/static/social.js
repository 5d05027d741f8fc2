// Murmur: the composer's live character counter (the server refuses a post over the limit anyway).
document.querySelectorAll("textarea[data-limit]").forEach((area) => {
  const form = area.closest("form");
  const counter = form && form.querySelector("[data-counter]");
  const button = form && form.querySelector("button[type=submit]");
  if (!counter) return;
  const limit = Number(area.dataset.limit);
  const update = () => {
    const left = limit - Array.from(area.value).length;
    counter.textContent = String(left);
    counter.dataset.left = String(left);
    counter.classList.toggle("near", left <= 20 && left >= 0);
    counter.classList.toggle("over", left < 0);
    if (button) button.setAttribute("aria-disabled", left < 0 ? "true" : "false");
  };
  area.addEventListener("input", update);
  update();
});
