/* Sorting the countries table by a column; ?sort=COLUMN&order=asc|desc in the URL is the table's state. */
(function () {
  "use strict";

  var table = document.getElementById("countries");
  var body = table.tBodies[0];
  var headings = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var columns = headings.map(function (th) { return th.getAttribute("data-column"); });
  var LABELS = { asc: "ascending", desc: "descending" };

  function value(row, index) {
    var cell = row.cells[index];
    return cell.getAttribute("data-value") || cell.textContent.trim();
  }

  function sort(column, order) {
    var index = columns.indexOf(column);
    if (index < 0) { column = "name"; index = 0; }
    if (order !== "desc") order = "asc";
    var numeric = headings[index].getAttribute("data-type") === "number";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, index), y = value(b, index);
      // an empty code sorts last either way; ties keep the order by country name
      if (!x !== !y) return x ? -1 : 1;
      var byValue = numeric ? Number(x) - Number(y) : x.localeCompare(y, "en");
      if (order === "desc") byValue = -byValue;
      return byValue || value(a, 0).localeCompare(value(b, 0), "en");
    });
    rows.forEach(function (row) { body.appendChild(row); });
    headings.forEach(function (th, i) {
      if (i === index) th.setAttribute("aria-sort", LABELS[order]);
      else th.removeAttribute("aria-sort");
    });
    document.getElementById("sorted-by").textContent = "Sorted by " +
      headings[index].textContent.trim() + ", " + LABELS[order] + ".";
    return { column: column, order: order };
  }

  var params = new URLSearchParams(location.search);
  var state = sort(params.get("sort") || "name", params.get("order") || "asc");

  headings.forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var column = th.getAttribute("data-column");
      var order = column === state.column && state.order === "asc" ? "desc" : "asc";
      state = sort(column, order);
      history.replaceState(null, "", "?sort=" + state.column + "&order=" + state.order);
    });
  });
})();
