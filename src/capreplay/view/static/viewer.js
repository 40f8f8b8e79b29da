// capreplay view: small enhancements; every page reads fine without this script.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // "only misses and blocked": hide the requests that the snapshot answered.
  for (const box of document.querySelectorAll("input.only-off")) {
    const table = document.querySelector("table." + box.dataset.table);
    if (!table) continue;
    box.addEventListener("change", () => {
      for (const row of table.tBodies[0].rows) {
        const result = row.cells[3] ? row.cells[3].textContent.trim() : "";
        row.classList.toggle("hidden", box.checked && result !== "miss" && result !== "blocked");
      }
    });
  }
});

// Review sheets. Opened from disk (an exported copy), the decision forms cannot post: hide them, and the page's
// note says how to decide. Served, a decision is saved without leaving the page; the answer carries the sheet's
// new sha256, which every form on the page takes, so the next decision is made on the bytes now on disk.
document.addEventListener("DOMContentLoaded", () => {
  const forms = document.querySelectorAll("form.decide");
  if (!forms.length) return;
  if (location.protocol === "file:") {
    document.documentElement.classList.add("from-file");
    return;
  }
  const say = (form, text, kind) => {
    const message = form.querySelector(".decide-message");
    message.className = "decide-message " + kind;
    message.textContent = text;
  };
  const each = (selector, task, apply) => {
    for (const el of document.querySelectorAll(selector)) {
      if (task === undefined || el.dataset.badgeOf === task || el.dataset.decisionOf === task) apply(el);
    }
  };
  for (const form of forms) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      say(form, "Saving…", "muted");
      try {
        const response = await fetch(form.action, {
          method: "POST",
          headers: { Accept: "application/json" },
          body: new URLSearchParams(new FormData(form)),
        });
        const data = await response.json();
        if (!data.ok) {
          say(form, "Not saved: " + data.error, "error");
          return;
        }
        each("form.decide input[name=sha256]", undefined, (el) => { el.value = data.sha256; });
        each("form.decide input[name=reviewer]", undefined, (el) => { el.value = data.reviewer; });
        each("[data-badge-of]", data.task, (el) => { el.innerHTML = data.badge; });
        each("[data-decision-of]", data.task, (el) => { el.innerHTML = data.state; });
        const decided = document.getElementById("decided");
        if (decided) decided.innerHTML = data.decided;
        form.querySelector("textarea[name=reason]").value = data.reason;
        say(form, data.message, "saved");
      } catch (error) {
        say(form, "Not saved: the viewer did not answer (" + error + ")", "error");
      } finally {
        button.disabled = false;
      }
    });
  }
});
