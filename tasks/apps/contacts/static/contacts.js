// Contacts table: row checkboxes drive the bulk bar (count, enabled buttons), the header box
// selects the whole page, shift-click selects a range. Modals: /static/cua/modal.js.
(function () {
  const boxes = Array.from(document.querySelectorAll("input.rowbox"));
  const pageBox = document.getElementById("select-page");
  const count = document.getElementById("selected-count");
  const bar = document.getElementById("bulkbar");
  let lastClicked = null;
  function sync() {
    const n = boxes.filter((b) => b.checked).length;
    if (count) count.textContent = (count.dataset.template || "{n} selected").replace("{n}", String(n));
    if (bar) {
      bar.classList.toggle("active", n > 0);
      bar.querySelectorAll("button[type=submit]").forEach((b) => { b.disabled = n === 0; });
    }
    boxes.forEach((b) => b.closest("tr").classList.toggle("selected", b.checked));
    if (pageBox) {
      pageBox.checked = n > 0 && n === boxes.length;
      pageBox.indeterminate = n > 0 && n < boxes.length;
    }
  }
  boxes.forEach((box) => box.addEventListener("click", (e) => {
    if (e.shiftKey && lastClicked) {
      const [a, b] = [boxes.indexOf(lastClicked), boxes.indexOf(box)].sort((x, y) => x - y);
      for (let i = a; i <= b; i++) boxes[i].checked = box.checked;
    }
    lastClicked = box;
    sync();
  }));
  if (pageBox) pageBox.addEventListener("change", () => { boxes.forEach((b) => { b.checked = pageBox.checked; }); sync(); });
  sync();
})();
