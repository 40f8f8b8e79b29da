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
