// Listing filters: the native sort <select> applies at once; checkout shows the new-address
// and new-card fieldsets only when chosen; the order-placed modal closes with OK or Escape (/static/cua/modal.js).
document.querySelectorAll("select[data-autosubmit]").forEach((sel) => {
  sel.addEventListener("change", () => sel.form.requestSubmit());
});
function syncFieldset(radioName, value, fieldsetId) {
  const fs = document.getElementById(fieldsetId);
  if (!fs) return;
  const update = () => {
    const checked = document.querySelector(`input[name="${radioName}"]:checked`);
    fs.hidden = !(checked && checked.value === value);
  };
  document.querySelectorAll(`input[name="${radioName}"]`).forEach((r) => r.addEventListener("change", update));
  update();
}
syncFieldset("address", "new", "new-address");
syncFieldset("card", "new", "new-card");
