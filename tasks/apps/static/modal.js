// Modals shared by the bundled apps: a control with data-open="ID" shows the element ID,
// one with data-close="ID" hides it, and Escape hides every open .modal-backdrop.
document.addEventListener("click", (e) => {
  const opener = e.target.closest("[data-open]");
  if (opener) document.getElementById(opener.dataset.open).hidden = false;
  const closer = e.target.closest("[data-close]");
  if (closer) document.getElementById(closer.dataset.close).hidden = true;
});
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") document.querySelectorAll(".modal-backdrop").forEach((m) => { m.hidden = true; });
});
