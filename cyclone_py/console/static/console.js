// The console's only script: confirm dialogs for forms with data-confirm,
// "select all" checkboxes, and a run page that follows its run while it is not
// over (#live): the page is fetched again every data-live-seconds and each
// [data-live-region] is replaced by the new one, unless the focus is inside it
// (a form being filled); it stops once the run has ended. Pages work without it.
document.addEventListener("submit", function (event) {
  var message = event.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) event.preventDefault();
});
document.addEventListener("change", function (event) {
  var name = event.target.getAttribute("data-select-all");
  if (!name) return;
  document.querySelectorAll('input[type=checkbox][name="' + name + '"]').forEach(function (box) {
    box.checked = event.target.checked;
  });
});

(function follow() {
  var live = document.getElementById("live");
  if (!live || !window.fetch || !window.DOMParser) return;
  var every = 1000 * Number(live.getAttribute("data-live-seconds") || 2);
  function update() {
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { window.setTimeout(update, every * 2); return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live-region]").forEach(function (region) {
          var next = region.id && fresh.getElementById(region.id);
          if (next && !region.contains(document.activeElement)) region.replaceWith(document.importNode(next, true));
        });
        if (fresh.getElementById("live")) window.setTimeout(update, every);
      })
      .catch(function () { window.setTimeout(update, every * 2); });
  }
  window.setTimeout(update, every);
})();
