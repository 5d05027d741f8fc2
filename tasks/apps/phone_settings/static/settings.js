// Show password: the Wi-Fi password field shows what is typed while the box is ticked.
const show = document.getElementById("show-password");
if (show) show.addEventListener("change", () => { document.getElementById("password").type = show.checked ? "text" : "password"; });
