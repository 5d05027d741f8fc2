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
// Sending to more people than the modal's threshold asks first (the send-many dialog of the compose page).
const sendMany = document.getElementById("send-many-modal");
const composeForm = document.querySelector("form.compose");
if (sendMany && composeForm) {
  const threshold = Number(sendMany.dataset.threshold);
  let confirmed = false;
  const recipients = () => ["to", "cc"].flatMap((n) => composeForm.elements[n].value.split(/[,;\s]+/)).filter((a) => a.trim());
  composeForm.addEventListener("submit", (e) => {
    const sending = !e.submitter || e.submitter.value === "send";
    const n = recipients().length;
    if (!sending || confirmed || n <= threshold) return;
    e.preventDefault();
    document.getElementById("send-many-text").textContent = `This email will go to ${n} people. Send it to all of them?`;
    window.cuaModal.show(sendMany, e.submitter);
  });
  document.getElementById("send-many-confirm").addEventListener("click", () => {
    confirmed = true;
    window.cuaModal.hide(sendMany);
    composeForm.requestSubmit(composeForm.querySelector('button[name=action][value=send]'));
  });
}
