// Checkbox toggles submit their form; the delete button opens a confirm modal.
document.addEventListener("change", (e) => {
  if (e.target.matches("input.toggle")) e.target.form.submit();
});
const modal = document.getElementById("delete-modal");
if (modal) {
  document.getElementById("delete-open").addEventListener("click", () => { modal.hidden = false; });
  document.getElementById("delete-cancel").addEventListener("click", () => { modal.hidden = true; });
}
