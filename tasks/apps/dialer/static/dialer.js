// The dial pad: keys append to the number, Backspace removes the last character
// (a long press clears it all), and typing refreshes the contact suggestions.
const number = document.getElementById("number");
if (number) {
  let timer = 0;
  const suggest = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const url = "/keypad?number=" + encodeURIComponent(number.value);
      history.replaceState(null, "", url);
      const page = new DOMParser().parseFromString(await (await fetch(url)).text(), "text/html");
      document.querySelector(".suggestions").replaceWith(page.querySelector(".suggestions"));
    }, 150);
  };
  document.querySelectorAll(".key").forEach((key) => key.addEventListener("click", () => {
    number.value += key.dataset.key;
    suggest();
  }));
  const back = document.getElementById("backspace");
  let held = 0;
  back.addEventListener("pointerdown", () => { held = setTimeout(() => { number.value = ""; held = -1; }, 700); });
  back.addEventListener("pointerup", () => clearTimeout(held));
  back.addEventListener("click", () => {
    if (held !== -1) number.value = number.value.slice(0, -1);
    held = 0;
    suggest();
  });
  number.addEventListener("input", suggest);
}
