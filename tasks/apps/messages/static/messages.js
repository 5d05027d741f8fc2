// A conversation opens at its latest message; the composer grows with what is typed.
const last = document.querySelector(".bubbles li:last-child");
if (last) last.scrollIntoView({block: "end"});
const box = document.querySelector(".composer textarea");
if (box) {
  box.addEventListener("input", () => { box.style.height = "auto"; box.style.height = Math.min(box.scrollHeight, 160) + "px"; });
}
