// The console's only script: confirm dialogs for forms with data-confirm, and
// "select all" checkboxes. Pages work without it.
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
