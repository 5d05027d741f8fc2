// The bundled apps' date picker widget (`.datepicker`), as agents meet them on real sites.
// The ▦ button (or Alt+ArrowDown in the field) opens a month grid; arrows move
// by day/week, PageUp/PageDown by month, Enter picks, Escape closes; the mouse clicks a day or
// the ‹ › buttons. The field also accepts typed YYYY-MM-DD.
// Method evidence: a hidden `input.dp-via` in the widget says how the field got its value:
// "date_picker" once a day is picked, "" again as soon as the field is typed into. The app's route records it in its activity log; no page lets a person type
// into the hidden field, and the app host takes no write from another page's origin.
(function () {
  const todayMeta = document.querySelector('meta[name="today"]');
  const TODAY = todayMeta ? todayMeta.content : new Date().toISOString().slice(0, 10);
  const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
  const pad = (n) => String(n).padStart(2, "0");
  const iso = (d) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const parse = (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !isNaN(Date.parse(s + "T00:00:00Z")) ? new Date(s + "T00:00:00Z") : null);
  const addDays = (d, n) => new Date(d.getTime() + n * 86400000);

  function setupDate(wrap) {
    const input = wrap.querySelector("input:not(.dp-via)");
    const via = wrap.querySelector("input.dp-via");
    const toggle = wrap.querySelector(".dp-toggle");
    input.addEventListener("input", () => { if (via) via.value = ""; });
    let pop = null, focusDate = null;
    function close(refocus) {
      if (pop) { pop.remove(); pop = null; toggle.setAttribute("aria-expanded", "false"); if (refocus) input.focus(); }
    }
    function render() {
      const first = new Date(Date.UTC(focusDate.getUTCFullYear(), focusDate.getUTCMonth(), 1));
      const start = addDays(first, -((first.getUTCDay() + 6) % 7));
      const selected = input.value;
      let rows = "";
      for (let w = 0; w < 6; w++) {
        rows += "<tr>";
        for (let i = 0; i < 7; i++) {
          const d = addDays(start, w * 7 + i), s = iso(d);
          const cls = [d.getUTCMonth() !== first.getUTCMonth() ? "other" : "", s === selected ? "sel" : "", s === TODAY ? "today" : ""].join(" ");
          rows += `<td><button type="button" class="dp-day ${cls}" data-date="${s}" tabindex="${s === iso(focusDate) ? 0 : -1}"
            aria-label="${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}"${s === selected ? ' aria-pressed="true"' : ""}>${d.getUTCDate()}</button></td>`;
        }
        rows += "</tr>";
      }
      pop.innerHTML = `<div class="dp-head"><button type="button" class="dp-prev" aria-label="Previous month">‹</button>
        <span class="dp-title" aria-live="polite">${MONTHS[first.getUTCMonth()]} ${first.getUTCFullYear()}</span>
        <button type="button" class="dp-next" aria-label="Next month">›</button></div>
        <table class="dp-grid" role="grid"><thead><tr>${["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"].map((x) => `<th>${x}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>`;
    }
    function moveTo(d) {
      focusDate = d; render();
      pop.querySelector(`.dp-day[data-date="${iso(d)}"]`).focus();
    }
    function open() {
      if (pop) return;
      focusDate = parse(input.value) || parse(TODAY);
      pop = document.createElement("div");
      pop.className = "dp-pop"; pop.setAttribute("role", "dialog"); pop.setAttribute("aria-label", "Choose date");
      wrap.appendChild(pop);
      toggle.setAttribute("aria-expanded", "true");
      moveTo(focusDate);
      pop.addEventListener("click", (e) => {
        const day = e.target.closest(".dp-day");
        if (day) { input.value = day.dataset.date; if (via) via.value = "date_picker"; input.dispatchEvent(new Event("change", { bubbles: true })); close(true); return; }
        if (e.target.closest(".dp-prev")) moveMonth(-1);
        if (e.target.closest(".dp-next")) moveMonth(1);
      });
      pop.addEventListener("keydown", (e) => {
        const steps = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 };
        if (e.key in steps && e.target.classList.contains("dp-day")) { e.preventDefault(); moveTo(addDays(focusDate, steps[e.key])); }
        else if (e.key === "PageUp") { e.preventDefault(); moveMonth(-1); }
        else if (e.key === "PageDown") { e.preventDefault(); moveMonth(1); }
        else if (e.key === "Escape") { e.preventDefault(); close(true); }
      });
    }
    function moveMonth(n) {
      const d = new Date(Date.UTC(focusDate.getUTCFullYear(), focusDate.getUTCMonth() + n, 1));
      const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      d.setUTCDate(Math.min(focusDate.getUTCDate(), last));
      moveTo(d);
    }
    toggle.addEventListener("click", () => (pop ? close(true) : open()));
    input.addEventListener("keydown", (e) => { if (e.key === "ArrowDown" && e.altKey) { e.preventDefault(); open(); } });
    document.addEventListener("mousedown", (e) => { if (pop && !wrap.contains(e.target)) close(false); });
  }

  document.querySelectorAll(".datepicker").forEach(setupDate);
})();
