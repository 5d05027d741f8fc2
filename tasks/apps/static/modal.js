// Modals shared by the bundled apps: a control with data-open="ID" shows the element ID,
// one with data-close="ID" hides it, and Escape hides every open .modal-backdrop.
// An open dialog holds the keyboard as real products' dialogs do: focus moves into it when it
// opens, Tab and Shift+Tab cycle inside it, and focus goes back to its opener when it closes.
(() => {  // its own scope: the apps' scripts share the page's global one
  const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';
  const openers = new Map();
  const focusables = (backdrop) => [...backdrop.querySelectorAll(FOCUSABLE)].filter((el) => el.offsetParent !== null);
  const openBackdrop = () => [...document.querySelectorAll(".modal-backdrop")].reverse().find((m) => !m.hidden);

  function showModal(backdrop, opener) {
    backdrop.hidden = false;
    openers.set(backdrop, opener || document.activeElement);
    const first = backdrop.querySelector("[autofocus]") || focusables(backdrop)[0];
    if (first) first.focus();
  }
  function hideModal(backdrop) {
    if (backdrop.hidden) return;
    backdrop.hidden = true;
    const back = openers.get(backdrop);
    openers.delete(backdrop);
    if (back && document.contains(back) && typeof back.focus === "function") back.focus();
  }
  window.cuaModal = { show: showModal, hide: hideModal };

  document.addEventListener("click", (e) => {
    const opener = e.target.closest("[data-open]");
    if (opener) showModal(document.getElementById(opener.dataset.open), opener);
    const closer = e.target.closest("[data-close]");
    if (closer) hideModal(document.getElementById(closer.dataset.close));
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") document.querySelectorAll(".modal-backdrop").forEach(hideModal);
    if (e.key !== "Tab") return;
    const backdrop = openBackdrop();
    if (!backdrop) return;
    const items = focusables(backdrop);
    if (!items.length) { e.preventDefault(); return; }
    const first = items[0], last = items[items.length - 1];
    if (!backdrop.contains(document.activeElement)) { e.preventDefault(); first.focus(); }
    else if (e.shiftKey && document.activeElement === first) { e.preventDefault(); last.focus(); }
    else if (!e.shiftKey && document.activeElement === last) { e.preventDefault(); first.focus(); }
  });
})();
