(function () {
  "use strict";
  // Every script error and unhandled rejection is recorded on the body element and shown,
  // so a reader (and the browser test) sees that the page's script failed.
  var errors = [];
  function show() {
    var body = document.body;
    if (!body || !errors.length) { return; }
    body.setAttribute("data-script-errors", String(errors.length));
    var box = document.getElementById("script-errors");
    if (box) { box.textContent = "Script errors on this page (the charts themselves are complete):\n" + errors.join("\n"); }
  }
  function record(text) {
    errors.push(String(text));
    show();
  }
  window.addEventListener("error", function (event) {
    record((event.message || "error") + " (" + (event.filename || "inline") + ":" + (event.lineno || 0) + ")");
  });
  window.addEventListener("unhandledrejection", function (event) {
    var reason = event.reason;
    record("unhandled rejection: " + (reason && reason.message ? reason.message : String(reason)));
  });
  window.crestRecordError = record;
  document.addEventListener("DOMContentLoaded", show);
})();
