// Share: only inside the phone shell, whose frame script gives the app window.cuaPhone;
// it sends the photo's description through the shell's share sheet.
if (window.cuaPhone) {
  document.querySelectorAll("[data-share]").forEach((button) => {
    button.hidden = false;
    button.addEventListener("click", () => window.cuaPhone.share(button.dataset.share));
  });
}
