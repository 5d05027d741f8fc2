// Shared by the phone apps (tasks/apps/phone.py): a control with data-dialog="ID" opens the
// modal <dialog> ID, one with data-close="ID" closes it; a switch or select marked
// data-autosubmit saves its form as soon as it changes, as a phone's settings do.
document.addEventListener("click", (e) => {
  const opener = e.target.closest("[data-dialog]");
  if (opener) {
    const dialog = document.getElementById(opener.dataset.dialog);
    if (dialog && !dialog.open) dialog.showModal();
  }
  const closer = e.target.closest("[data-close]");
  if (closer) document.getElementById(closer.dataset.close)?.close();
});
document.addEventListener("change", (e) => {
  const field = e.target.closest("[data-autosubmit]");
  if (field && field.form) field.form.requestSubmit();
});
