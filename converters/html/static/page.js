// Enhancements only: everything is readable without this script. Allowed by the page's
// Content-Security-Policy through its SHA-256 hash; it never inserts session text as HTML.
(function () {
  "use strict";
  var doc = document;
  doc.documentElement.setAttribute("data-js", "on");
  function $(id) { return doc.getElementById(id); }
  function all(sel, root) { return Array.prototype.slice.call((root || doc).querySelectorAll(sel)); }
  // The controls need this script: they stay hidden without it.
  ["controls", "ov-tools"].forEach(function (id) { var el = $(id); if (el) el.hidden = false; });

  var ov = $("overview");
  var wide = window.matchMedia ? window.matchMedia("(min-width: 70rem)") : null;
  function isWide() { return !!(wide && wide.matches); }
  if (ov && isWide()) ov.open = true;

  function openAncestors(el) {
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
  }
  function setAll(sel, open) { all(sel).forEach(function (d) { d.open = open; }); }
  function toggle(sel) {
    var list = all(sel), anyClosed = list.some(function (d) { return !d.open; });
    list.forEach(function (d) { d.open = anyClosed; });
  }

  // ---- times, said again in the reader's time zone (without this script: in UTC). An
  // entry's time carries its date when the day changed since the entry before; the exact
  // time stamp stays the element's title.
  if (window.Intl && Intl.DateTimeFormat) {
    var dayFmt = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });
    var clockFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    var fullFmt = new Intl.DateTimeFormat(undefined, {
      year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short"
    });
    var lastDay = "";
    all("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      if (t.className === "ts") {
        var day = dayFmt.format(d), clock = clockFmt.format(d);
        t.textContent = day === lastDay ? clock : day + ", " + clock;
        lastDay = day;
      } else {
        t.textContent = fullFmt.format(d);
      }
    });
  }

  // ---- the tree overview: lines by entry id, the chosen path
  var lines = null;
  function lineFor(id) {
    if (!lines) {
      lines = {};
      if (ov) all("li > a[href]", ov).forEach(function (a) { lines[a.getAttribute("href").slice(1)] = a.parentElement; });
    }
    return lines[id] || null;
  }
  function isEntry(li) { return li && li.tagName === "LI" && !/\bov-(fork|branch|flat)\b/.test(li.className); }
  function firstEntryId(branchLi) {
    var a = branchLi.querySelector("a[href]");
    return a ? a.getAttribute("href").slice(1) : "";
  }
  // Entries from the root to ``li`` and on to the newest end below it (the last branch at
  // each fork, as pi does), and the branches passed on the way.
  function pathOf(li) {
    var entries = [], branches = [], node = li, s;
    while (node) {
      for (s = node; s; s = s.previousElementSibling) if (isEntry(s)) entries.push(s);
      var branch = node.parentElement && node.parentElement.parentElement;
      if (!branch || !/\bov-branch\b/.test(branch.className)) break;
      branches.push(branch);
      node = branch.parentElement.parentElement;  // the fork's <li>, last of its run
    }
    for (s = li.nextElementSibling; s; s = s.nextElementSibling) {
      if (isEntry(s)) entries.push(s);
      else if (/\bov-fork\b/.test(s.className)) {
        var last = s.firstElementChild && s.firstElementChild.lastElementChild;
        var run = last && last.firstElementChild;
        if (!run || !run.firstElementChild) break;
        branches.push(last);
        s = run.firstElementChild;
        if (isEntry(s)) entries.push(s);
      }
    }
    return { entries: entries, branches: branches };
  }
  var marked = ov ? all("li.cur", ov) : [], chosen = null;
  function choose(li) {
    var p = pathOf(li);
    marked.forEach(function (m) { m.classList.remove("cur"); });
    p.entries.forEach(function (m) { m.classList.add("cur"); });
    marked = p.entries;
    if (chosen) chosen.classList.remove("at");
    chosen = li; li.classList.add("at");
    // The transcript shows that branch: its <details> open, their siblings closed.
    p.branches.forEach(function (b) {
      var d = $("b" + firstEntryId(b).slice(1));
      if (!d) return;
      var box = d.parentElement;
      if (box) all(":scope > details.branch", box).forEach(function (x) {
        if (x !== d) { x.open = false; x.classList.remove("on-path"); }
      });
      d.open = true; d.classList.add("on-path");
    });
  }

  // ---- following a link to an entry: choose it in the tree, open what hides it, scroll
  function hashId() {
    var h = location.hash.slice(1);
    try { return decodeURIComponent(h); } catch (e) { return h; }  // a malformed escape
  }
  function showTarget() {
    var id = hashId(), el = id && $(id);
    if (!el) return;
    var li = lineFor(id);
    if (li) {
      choose(li);
      if (ov && ov.open && isWide()) li.scrollIntoView({ block: "nearest" });
    }
    openAncestors(el);
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", showTarget);
  if (location.hash) showTarget();

  // ---- filters (pi's: default, no tools, user only, labeled, all)
  function setFilter(name) {
    if (!ov) return;
    ov.className = ov.className.replace(/\s*\bf-[a-z-]+/g, "") + " f-" + name;
    all(".filters button", ov).forEach(function (b) {
      b.classList.toggle("on", b.getAttribute("data-act") === "f-" + name);
    });
  }
  setFilter("default");

  // ---- search: filters the tree to entries containing every word; Enter jumps to the next
  var search = $("search"), status = $("search-status");
  var texts = null, hits = [], at = -1, timer = 0;
  function run() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length && !texts) {
      texts = all("li > a[href]", ov).map(function (a) {
        var el = $(a.getAttribute("href").slice(1));
        return [a.parentElement, (a.textContent + " " + (el ? el.textContent : "")).toLowerCase()];
      });
    }
    hits = []; at = -1;
    (texts || []).forEach(function (p) {
      var ok = words.every(function (w) { return p[1].indexOf(w) >= 0; });
      p[0].classList.toggle("miss", words.length > 0 && !ok);
      p[0].classList.toggle("hit", words.length > 0 && ok);
      if (words.length && ok) hits.push(p[0]);
    });
    status.textContent = words.length ? hits.length + " found" : "";
  }
  function next(step) {
    if (!hits.length) return;
    at = (at + step + hits.length) % hits.length;
    var href = hits[at].firstElementChild.getAttribute("href");
    if (location.hash === href) showTarget(); else location.hash = href;
    status.textContent = (at + 1) + " / " + hits.length;
  }
  if (search) {
    search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 150); });
    search.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") { ev.preventDefault(); clearTimeout(timer); run(); next(ev.shiftKey ? -1 : 1); }
      if (ev.key === "Escape") { search.value = ""; run(); search.blur(); }
    });
  }

  // ---- buttons and keys
  var actions = {
    expand: function () { setAll("main details", true); },
    collapse: function () { setAll("main details:not(.on-path)", false); },
    thinking: function () { toggle("details.thinking"); },
    tools: function () { toggle("section.tool details.output"); }
  };
  doc.addEventListener("click", function (ev) {
    var t = ev.target;
    var btn = t && t.closest ? t.closest("button[data-act]") : null;
    if (btn) {
      var act = btn.getAttribute("data-act");
      if (act.slice(0, 2) === "f-") setFilter(act.slice(2));
      else if (actions[act]) actions[act]();
      return;
    }
    var a = t && t.closest && ov ? t.closest("a[href]") : null;
    if (a && ov.contains(a)) {
      if (!isWide()) ov.open = false;  // on a narrow screen the tree gives way to the entry
      if (a.getAttribute("href") === location.hash) { ev.preventDefault(); showTarget(); }
    }
  });
  doc.addEventListener("keydown", function (ev) {
    var t = ev.target && ev.target.tagName;
    if (ev.ctrlKey || ev.metaKey || ev.altKey || t === "INPUT" || t === "TEXTAREA") return;
    var keys = { e: "expand", c: "collapse", t: "thinking", o: "tools" };
    if (ev.key === "/" && search) { ev.preventDefault(); if (ov) ov.open = true; search.focus(); }
    else if (keys[ev.key]) actions[keys[ev.key]]();
  });

  // Print everything: open all details for printing, restore afterwards.
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = all("main details:not([open])"); closed.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () { closed.forEach(function (d) { d.open = false; }); closed = []; });
})();
