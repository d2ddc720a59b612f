// Confirm before destructive forms (data-confirm). Everything works without it.
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
// Select a freshly created token so it can be copied at once.
document.addEventListener("DOMContentLoaded", function () {
  var token = document.querySelector("input.token");
  if (token) { token.focus(); token.select(); }
});
