// Event form: all-day hides the times, "Repeat until" shows only for repeating events, the
// guest filter narrows the people list. Modals: /static/cua/modal.js.
const allDay = document.getElementById("all_day");
if (allDay) {
  const times = document.querySelector(".times");
  const sync = () => { times.hidden = allDay.checked; };
  allDay.addEventListener("change", sync); sync();
}
const recur = document.getElementById("recur");
if (recur) {
  const until = document.getElementById("recur_until").closest(".field");
  const sync = () => { until.hidden = recur.value === "none"; };
  recur.addEventListener("change", sync); sync();
}
const filter = document.getElementById("guest-filter");
if (filter) {
  filter.addEventListener("input", () => {
    const q = filter.value.trim().toLowerCase();
    document.querySelectorAll(".guest").forEach((g) => { g.hidden = q && !g.dataset.name.includes(q); });
  });
  filter.addEventListener("keydown", (e) => { if (e.key === "Enter") e.preventDefault(); });
}
