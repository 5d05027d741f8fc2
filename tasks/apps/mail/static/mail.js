// Mail page behaviour: select-all and keyboard access to the row action menu.
const selectAll = document.getElementById("select-all");
if (selectAll) {
  selectAll.addEventListener("change", () => {
    document.querySelectorAll('input[name="ids"]').forEach((box) => { box.checked = selectAll.checked; });
  });
}
// Rows are clickable as a whole (except their controls), like a real mail client.
document.querySelectorAll("tr.msg-row").forEach((row) => {
  row.addEventListener("click", (e) => {
    if (e.target.closest("button, input, a, label")) return;
    row.querySelector("a.msg-link").click();
  });
});
const fileInput = document.getElementById("files");
if (fileInput) {
  fileInput.addEventListener("change", () => {
    let list = document.getElementById("file-list");
    if (!list) { list = document.createElement("ul"); list.id = "file-list"; fileInput.parentElement.after(list); }
    list.innerHTML = "";
    for (const f of fileInput.files) {
      const li = document.createElement("li");
      li.textContent = `${f.name} (${Math.max(1, Math.round(f.size / 1024))} KB)`;
      list.appendChild(li);
    }
  });
}
