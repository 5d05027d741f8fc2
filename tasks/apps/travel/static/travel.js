// Airport comboboxes, the calendar date picker, the booking form's total, and the
// cancel-booking confirm modal.
(() => {
  const dataEl = document.getElementById("airports-data");
  const airports = dataEl ? JSON.parse(dataEl.textContent) : [];
  for (const combo of document.querySelectorAll("[data-combo]")) {
    const input = combo.querySelector("input");
    const list = combo.querySelector("[role=listbox]");
    let items = [], active = -1;
    const close = () => { list.hidden = true; input.setAttribute("aria-expanded", "false"); input.removeAttribute("aria-activedescendant"); active = -1; };
    const pick = (a) => { input.value = `${a.city} (${a.code})`; close(); };
    const highlight = (i) => {
      active = i;
      [...list.children].forEach((li, j) => li.setAttribute("aria-selected", j === i ? "true" : "false"));
      if (i >= 0) { input.setAttribute("aria-activedescendant", list.children[i].id); list.children[i].scrollIntoView({ block: "nearest" }); }
    };
    const open = () => {
      const q = input.value.trim().toLowerCase();
      items = airports.filter((a) => !q || a.code.toLowerCase().startsWith(q) || a.city.toLowerCase().includes(q) || a.name.toLowerCase().includes(q) || `${a.city} (${a.code})`.toLowerCase() === q);
      list.innerHTML = "";
      items.forEach((a, i) => {
        const li = document.createElement("li");
        li.id = `${list.id}-opt-${i}`;
        li.setAttribute("role", "option");
        li.dataset.code = a.code;
        li.innerHTML = `<strong></strong> <span class="muted"></span>`;
        li.firstChild.textContent = `${a.city} (${a.code})`;
        li.lastChild.textContent = a.name;
        li.addEventListener("mousedown", (e) => { e.preventDefault(); pick(a); });
        list.appendChild(li);
      });
      list.hidden = items.length === 0;
      input.setAttribute("aria-expanded", items.length ? "true" : "false");
      highlight(items.length ? 0 : -1);
    };
    input.addEventListener("input", open);
    input.addEventListener("focus", open);
    input.addEventListener("blur", close);
    input.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown") { e.preventDefault(); if (list.hidden) open(); else highlight(Math.min(active + 1, items.length - 1)); }
      else if (e.key === "ArrowUp") { e.preventDefault(); highlight(Math.max(active - 1, 0)); }
      else if (e.key === "Enter" && !list.hidden && active >= 0) { e.preventDefault(); pick(items[active]); }
      else if (e.key === "Escape") close();
    });
  }

  for (const picker of document.querySelectorAll("[data-datepicker]")) {
    const input = picker.querySelector("input");
    const btn = picker.querySelector(".cal-btn");
    const cal = picker.querySelector(".calendar");
    const min = cal.dataset.min;
    const lang = document.documentElement.lang || "en-US";
    const words = { prev: "Previous month", next: "Next month", ...JSON.parse(cal.dataset.words || "{}") };
    // Monday first, in the page's language (2024-01-01 was a Monday)
    const dows = [...Array(7)].map((_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toLocaleString(lang, { weekday: "short", timeZone: "UTC" }).slice(0, 2));
    const iso = (d) => d.toISOString().slice(0, 10);
    const parse = (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) ? new Date(s + "T00:00:00Z") : null;
    let month = null, focusDay = null;
    const render = () => {
      const y = month.getUTCFullYear(), m = month.getUTCMonth();
      const label = month.toLocaleString(lang, { month: "long", year: "numeric", timeZone: "UTC" });
      const firstDow = (new Date(Date.UTC(y, m, 1)).getUTCDay() + 6) % 7;
      const days = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
      let html = `<div class="cal-head"><button type="button" class="prev" aria-label="${words.prev}">‹</button>` +
        `<span class="cal-title" aria-live="polite">${label}</span><button type="button" class="next" aria-label="${words.next}">›</button></div>` +
        `<table role="grid"><thead><tr>${dows.map((d) => `<th>${d}</th>`).join("")}</tr></thead><tbody><tr>`;
      for (let i = 0; i < firstDow; i++) html += "<td></td>";
      for (let d = 1; d <= days; d++) {
        const date = iso(new Date(Date.UTC(y, m, d)));
        const past = date < min;
        html += `<td><button type="button" class="day" data-date="${date}" aria-label="${date}" tabindex="${date === focusDay ? 0 : -1}"` +
          `${past ? " disabled" : ""}${date === input.value ? ' aria-pressed="true"' : ""}>${d}</button></td>`;
        if ((firstDow + d) % 7 === 0 && d < days) html += "</tr><tr>";
      }
      cal.innerHTML = html + "</tr></tbody></table>";
      const f = cal.querySelector(`[data-date="${focusDay}"]`);
      if (f && !cal.hidden) f.focus();
    };
    const show = () => {
      const cur = parse(input.value) || parse(min);
      focusDay = iso(cur < parse(min) ? parse(min) : cur);
      month = new Date(Date.UTC(cur.getUTCFullYear(), cur.getUTCMonth(), 1));
      cal.hidden = false;
      btn.setAttribute("aria-expanded", "true");
      render();
    };
    const hide = (refocus) => { cal.hidden = true; btn.setAttribute("aria-expanded", "false"); if (refocus) input.focus(); };
    btn.addEventListener("click", () => (cal.hidden ? show() : hide(true)));
    cal.addEventListener("click", (e) => {
      const t = e.target.closest("button");
      if (!t) return;
      if (t.classList.contains("prev")) { month.setUTCMonth(month.getUTCMonth() - 1); focusDay = iso(month); render(); }
      else if (t.classList.contains("next")) { month.setUTCMonth(month.getUTCMonth() + 1); focusDay = iso(month); render(); }
      else if (t.dataset.date && !t.disabled) { input.value = t.dataset.date; hide(true); }
    });
    cal.addEventListener("keydown", (e) => {
      const steps = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 };
      if (e.key === "Escape") { e.preventDefault(); hide(true); return; }
      if (!(e.key in steps) || !focusDay) return;
      e.preventDefault();
      const d = parse(focusDay);
      d.setUTCDate(d.getUTCDate() + steps[e.key]);
      focusDay = iso(d);
      month = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
      render();
    });
    document.addEventListener("mousedown", (e) => { if (!cal.hidden && !picker.contains(e.target)) hide(false); });
  }

  const form = document.getElementById("booking-form");
  if (form) {
    const map = form.querySelector("seat-map");
    const fare = parseInt(document.getElementById("fare").dataset.fare, 10);
    const premiumRows = parseInt(map.getAttribute("premium-rows"), 10);
    const update = () => {
      const seat = document.getElementById("seat-input").value;
      const seatFee = seat && parseInt(seat, 10) <= premiumRows ? 45 : 0;
      const bags = parseInt(document.getElementById("bags").value, 10) * 35;
      const total = document.getElementById("total");
      const sum = fare + seatFee + bags;
      total.textContent = total.dataset.locale === "de-DE"
        ? new Intl.NumberFormat("de-DE", { style: "currency", currency: "USD" }).format(sum) : `$${sum}`;
    };
    map.addEventListener("seat-change", (e) => {
      document.getElementById("seat-input").value = e.detail.seat;
      document.getElementById("seat-label").textContent = e.detail.seat;
      update();
    });
    document.getElementById("bags").addEventListener("change", update);
    form.addEventListener("change", (e) => {
      if (e.target.name === "card") document.getElementById("new-card").hidden = e.target.value !== "new";
    });
    update();
  }
  const modal = document.getElementById("cancel-modal");
  if (modal) {
    document.getElementById("cancel-open").addEventListener("click", () => { modal.hidden = false; document.getElementById("cancel-keep").focus(); });
    document.getElementById("cancel-keep").addEventListener("click", () => { modal.hidden = true; });
    modal.addEventListener("keydown", (e) => { if (e.key === "Escape") modal.hidden = true; });
  }
})();
