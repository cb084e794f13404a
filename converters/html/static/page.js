// Enhancements only: everything is readable without this script. Allowed by the page's
// Content-Security-Policy through its SHA-256 hash; it never inserts session text as HTML.
(function () {
  "use strict";
  var doc = document;
  doc.documentElement.setAttribute("data-js", "on");
  var controls = doc.getElementById("controls");
  if (controls) controls.hidden = false;

  function all(sel) { return Array.prototype.slice.call(doc.querySelectorAll(sel)); }
  function openAncestors(el) {
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
  }
  function setAll(sel, open) { all(sel).forEach(function (d) { d.open = open; }); }
  function toggle(sel) {
    var list = all(sel), anyClosed = list.some(function (d) { return !d.open; });
    list.forEach(function (d) { d.open = anyClosed; });
  }
  var actions = {
    expand: function () { setAll("details", true); },
    collapse: function () { setAll("main details:not(.on-path)", false); },
    thinking: function () { toggle("details.thinking"); },
    tools: function () { toggle("section.tool details.output"); }
  };

  // Branch switching: a link to an entry inside a closed branch opens that branch.
  function showTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && doc.getElementById(id);
    if (!el) return;
    openAncestors(el);
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", showTarget);
  if (location.hash) showTarget();

  // Search: entries whose text contains the query; Enter jumps to the next hit.
  var search = doc.getElementById("search"), status = doc.getElementById("search-status");
  var entries = null, hits = [], at = -1, timer = 0;
  function run() {
    var q = search.value.trim().toLowerCase();
    hits.forEach(function (e) { e.classList.remove("search-hit"); });
    hits = []; at = -1;
    if (q) {
      if (!entries) entries = all(".entry").map(function (e) { return [e, e.textContent.toLowerCase()]; });
      entries.forEach(function (p) { if (p[1].indexOf(q) >= 0) { hits.push(p[0]); p[0].classList.add("search-hit"); } });
    }
    status.textContent = q ? hits.length + " found" : "";
  }
  function next(step) {
    if (!hits.length) return;
    at = (at + step + hits.length) % hits.length;
    openAncestors(hits[at]);
    hits[at].scrollIntoView({ block: "center" });
    status.textContent = (at + 1) + " / " + hits.length;
  }
  if (search) {
    search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 150); });
    search.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") { ev.preventDefault(); run(); next(ev.shiftKey ? -1 : 1); }
      if (ev.key === "Escape") { search.value = ""; run(); search.blur(); }
    });
  }
  if (controls) controls.addEventListener("click", function (ev) {
    var act = ev.target && ev.target.getAttribute && ev.target.getAttribute("data-act");
    if (act && actions[act]) actions[act]();
  });

  doc.addEventListener("keydown", function (ev) {
    var t = ev.target && ev.target.tagName;
    if (ev.ctrlKey || ev.metaKey || ev.altKey || t === "INPUT" || t === "TEXTAREA") return;
    var keys = { e: "expand", c: "collapse", t: "thinking", o: "tools" };
    if (ev.key === "/" && search) { ev.preventDefault(); search.focus(); }
    else if (keys[ev.key]) actions[keys[ev.key]]();
  });

  // Print everything: open all details for printing, restore afterwards.
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = all("details:not([open])"); closed.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () { closed.forEach(function (d) { d.open = false; }); closed = []; });
})();
