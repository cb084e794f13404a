// Only on a page `piconv watch` keeps current: the page reloads itself (a refresh <meta>)
// while the session is watched; this keeps the reader's place across the reloads: the
// scroll position and which branches are open, kept for this tab only.
(function () {
  "use strict";
  var store, key = "piconv-place:" + location.pathname;
  try { store = window.sessionStorage; } catch (e) { return; }
  if (!store) return;
  function save() {
    try {
      var open = [];
      Array.prototype.forEach.call(document.querySelectorAll("details[id]"), function (d) {
        if (d.open) open.push(d.id);
      });
      store.setItem(key, JSON.stringify({ x: window.scrollX, y: window.scrollY, open: open }));
    } catch (e) { /* storage full or refused: the page still reloads */ }
  }
  window.addEventListener("pagehide", save);
  window.addEventListener("beforeunload", save);
  var place = null;
  try { place = JSON.parse(store.getItem(key) || "null"); } catch (e) { place = null; }
  if (!place || typeof place.y !== "number") return;
  if ("scrollRestoration" in history) history.scrollRestoration = "manual";
  var open = Array.isArray(place.open) ? place.open : [];
  Array.prototype.forEach.call(document.querySelectorAll("details[id]"), function (d) {
    d.open = open.indexOf(d.id) >= 0;
  });
  window.scrollTo(place.x || 0, place.y);
})();
