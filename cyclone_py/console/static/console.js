// The console's only script: confirm dialogs for forms with data-confirm,
// "select all" checkboxes, times shown in the browser's own time zone
// (<time datetime data-local>: the page says UTC, the script says local), and
// a page that follows what it shows (#live: a run while it is not over, the
// overview): the page is fetched again every data-live-seconds and each
// [data-live-region] is replaced by the new one, unless the focus is inside it
// (a form being filled); it stops once the fetched page has no #live (the run
// has ended). Pages work without it.
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

function two(n) { return (n < 10 ? "0" : "") + n; }

// A <time data-local>'s UTC text becomes the browser's wall clock with its
// offset ("2026-12-03 08:00:00 UTC+02:00"); the UTC text stays as its title.
function localise(root) {
  root.querySelectorAll("time[data-local]").forEach(function (el) {
    var at = new Date(el.getAttribute("datetime"));
    if (isNaN(at.getTime())) return;
    var offset = -at.getTimezoneOffset();
    var zone = "UTC" + (offset < 0 ? "-" : "+") + two(Math.floor(Math.abs(offset) / 60)) + ":" + two(Math.abs(offset) % 60);
    if (!el.title) el.title = el.textContent;
    el.textContent = at.getFullYear() + "-" + two(at.getMonth() + 1) + "-" + two(at.getDate()) + " " +
      two(at.getHours()) + ":" + two(at.getMinutes()) + ":" + two(at.getSeconds()) + " " + zone;
    el.setAttribute("data-localised", "");
  });
}
localise(document);

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
          if (next && !region.contains(document.activeElement)) {
            var node = document.importNode(next, true);
            localise(node);
            region.replaceWith(node);
          }
        });
        if (fresh.getElementById("live")) window.setTimeout(update, every);
      })
      .catch(function () { window.setTimeout(update, every * 2); });
  }
  window.setTimeout(update, every);
})();
