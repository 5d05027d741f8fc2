// Event form: all-day hides the times, "Repeat until" shows only for repeating events, the
// guest filter narrows the people list. Everywhere: confirm modals open and close.
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
document.addEventListener("click", (e) => {
  const opener = e.target.closest("[data-open]");
  if (opener) document.getElementById(opener.dataset.open).hidden = false;
  const closer = e.target.closest("[data-close]");
  if (closer) document.getElementById(closer.dataset.close).hidden = true;
});
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") document.querySelectorAll(".modal-backdrop").forEach((m) => { m.hidden = true; });
});
