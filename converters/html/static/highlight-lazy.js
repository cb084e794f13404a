// Colours code blocks as they come near the viewport, so a page holding a huge session
// opens as fast as a plain one and blocks nobody scrolls to cost nothing. highlight.js
// reads a block's text (textContent) and escapes all it writes back. A block above LARGE
// characters would hold the page for a noticeable time: it gets a button instead.
// Runs inside the function that defines ``hljs`` (hljs.py).
var LARGE = 200000, SLICE_MS = 30;
var queue = [], busy = false;
function paint(code) {
  if (code.getAttribute("data-highlighted")) return;
  try { hljs.highlightElement(code); } catch (e) { /* a grammar failed: the block stays plain */ }
}
function drain() {
  // Blocks arriving together (a long jump, "expand all") are coloured in slices, so
  // scrolling stays smooth.
  var end = Date.now() + SLICE_MS;
  while (queue.length && Date.now() < end) paint(queue.shift());
  if (queue.length) setTimeout(drain, 0); else busy = false;
}
function offer(code) {
  var pre = code.parentElement, b = document.createElement("button");
  b.type = "button";
  b.className = "hl-offer";
  b.textContent = "Colour this block (" + code.textContent.length.toLocaleString("en") + " characters)";
  b.addEventListener("click", function () { b.parentElement.removeChild(b); paint(code); });
  pre.parentElement.insertBefore(b, pre);
}
function want(code) {
  if (code.textContent.length > LARGE) { offer(code); return; }
  queue.push(code);
  if (!busy) { busy = true; setTimeout(drain, 0); }
}
// The blocks, and the previews of collapsed ones (coloured as their blocks are).
var blocks = Array.prototype.slice.call(
  document.querySelectorAll("pre > code[class^='language-'], .preview > code[class^='language-']"));
if (!window.IntersectionObserver) {
  blocks.forEach(want);
} else {
  var near = new IntersectionObserver(function (changes) {
    changes.forEach(function (c) {
      if (c.isIntersecting) { near.unobserve(c.target); want(c.target); }
    });
  }, { rootMargin: "1000px 0px" });
  blocks.forEach(function (code) { near.observe(code); });
}
