(function () {
  "use strict";
  // Filtering and sorting of the findings table. Reads the DOM only; writes textContent, hidden and
  // aria-sort, never HTML, so nothing from the data can become markup. A URL hash such as
  // #severity=critical&broker=103 preselects filters (values must match an existing option).
  var table = document.getElementById("findings-table");
  var visible = document.getElementById("visible-count");
  if (!table || !table.tBodies.length) { document.documentElement.setAttribute("data-ready", "1"); return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var text = document.getElementById("filter-text");
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));

  function apply() {
    var needle = text ? text.value.trim().toLowerCase() : "";
    var shown = 0;
    rows.forEach(function (row) {
      var ok = selects.every(function (sel) {
        return !sel.value || row.getAttribute("data-" + sel.getAttribute("data-filter")) === sel.value;
      });
      if (ok && needle) { ok = row.textContent.toLowerCase().indexOf(needle) !== -1; }
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    if (visible) { visible.textContent = String(shown); }
  }

  function sortBy(th, index) {
    var numeric = th.getAttribute("data-type") === "num";
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var keyed = rows.map(function (row, pos) {
      var cell = row.cells[index];
      var raw = cell ? (cell.getAttribute("data-sort") || cell.textContent) : "";
      var key = numeric ? (raw === "" ? -Infinity : Number(raw)) : raw.toLowerCase();
      return { row: row, key: key, pos: pos };
    });
    keyed.sort(function (a, b) {
      if (a.key < b.key) { return -dir; }
      if (a.key > b.key) { return dir; }
      return a.pos - b.pos;
    });
    rows = keyed.map(function (k) { return k.row; });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
    var button = th.querySelector("button");
    if (button) { button.addEventListener("click", function () { sortBy(th, index); }); }
  });
  if (text) { text.addEventListener("input", apply); }
  selects.forEach(function (sel) { sel.addEventListener("change", apply); });

  function decode(part) {
    try { return decodeURIComponent(part || ""); } catch (e) { return ""; }
  }
  var hash = window.location.hash.replace(/^#/, "");
  if (hash) {
    hash.split("&").forEach(function (pair) {
      var kv = pair.split("=");
      var name = decode(kv[0]);
      var value = decode(kv[1]);
      selects.forEach(function (sel) {
        if (sel.getAttribute("data-filter") !== name) { return; }
        var known = Array.prototype.some.call(sel.options, function (o) { return o.value === value; });
        if (known) { sel.value = value; }
      });
    });
  }
  // A click on a chart bar filters the table by that bar (a second click on the same bar clears it).
  var chartFilters = { "chart-severity": "severity", "chart-check": "check", "chart-broker": "broker",
                       "chart-bytes": "broker" };
  Object.keys(chartFilters).forEach(function (chartId) {
    var chart = document.getElementById(chartId);
    var sel = document.getElementById("filter-" + chartFilters[chartId]);
    if (!chart || !sel) { return; }
    Array.prototype.forEach.call(chart.querySelectorAll("g.mark"), function (mark) {
      mark.addEventListener("click", function () {
        var value = (mark.getAttribute("data-label") || "").replace(/^broker /, "");
        var known = Array.prototype.some.call(sel.options, function (o) { return o.value === value; });
        if (!known) { return; }
        sel.value = sel.value === value ? "" : value;
        apply();
        table.scrollIntoView();
      });
    });
  });
  apply();
  document.documentElement.setAttribute("data-ready", "1");
})();
