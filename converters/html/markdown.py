"""Markdown → HTML for message text, with raw HTML disabled (shown as text).

Renderer: cmark-gfm through ``cmarkgfm`` (C), a well-kept GFM implementation that renders
message text several times faster than markdown-it-py with the same extensions (see
docs/formats/html.md).

cmark's own "safe" mode drops raw HTML (``<!-- raw HTML omitted -->``), which would lose
what the model wrote. Instead every ``<`` that could open a tag, comment or declaration
is swapped for the noncharacter U+FDD0 before parsing, so cmark sees plain text, and is
turned back into ``&lt;`` afterwards: raw HTML appears verbatim as text, also inside
code spans and blocks. U+FDD0 cannot occur in the input: escape.clean replaces every
noncharacter first. Autolinks (``<https://…>``) keep their ``<``; they cannot be tags.
Safe mode stays on as a second line of defence.

Every tag in the output is then one cmark generated, which makes the post-processing
regular expressions below exact: link targets go through the URL policy, images become
inline data URLs (allow-listed types) or plain links (no network request), table
alignment moves from the obsolete ``align`` attribute to a class, fenced code blocks
name their language for the browser's highlighter.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator

from .escape import clean, image_src, safe_href
from .escape import text as esc
from .highlight import Highlighter

SENTINEL = "\ufdd0"
_HTML_START = re.compile(r"<(?![A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>\x00-\x20]*>)(?=[A-Za-z/!?])")
_EXTENSIONS = ["table", "strikethrough", "autolink", "tasklist"]

_A = re.compile(r'<a href="([^"]*)"( title="[^"]*")?>')
_IMG = re.compile(r'<img src="([^"]*)" alt="([^"]*)"(?: title="([^"]*)")? />')
_ALIGN = re.compile(r'<(th|td) align="(left|center|right)">')
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.M)
_CODE = re.compile(r'<pre><code class="language-([^"]*)">(.*?)</code></pre>', re.S)


def _link(m: re.Match[str]) -> str:
    url = safe_href(html.unescape(m.group(1)))
    title = m.group(2) or ""
    if url is None:
        # The text stays; the link goes (an <a> without href is a placeholder link).
        return f'<a class="blocked-link"{title}>'
    return f'<a href="{esc(url)}" rel="nofollow noopener noreferrer"{title}>'


def _image(m: re.Match[str]) -> str:
    src = html.unescape(m.group(1))
    alt = m.group(2)  # already escaped by cmark
    if src.startswith("data:") and ";base64," in src:
        mt, _, data = src[5:].partition(";base64,")
        url, _reason = image_src(mt, data)
        if url is not None:
            return f'<img src="{url}" alt="{alt}">'
    label = f"[image: {alt}]" if alt else "[image]"
    href = safe_href(src)
    if href is None:
        return f'<span class="blocked-image">{label}</span>'
    # A remote image would be a network request; it becomes a link the reader can follow.
    return f'<a href="{esc(href)}" class="remote-image" rel="nofollow noopener noreferrer">{label}</a>'


def _cmark_renderer() -> Callable[[str], str]:
    """cmark-gfm through cmarkgfm's C bindings, with the extensions looked up once.
    cmarkgfm's own ``markdown_to_html_with_extensions`` does the same calls but looks
    every extension up again per text, a third of the time on short texts."""
    from cmarkgfm import _cmark  # lazy: only pages with Markdown pay for the import

    lib, ffi = _cmark.lib, _cmark.ffi
    lib.cmark_gfm_core_extensions_ensure_registered()
    extensions = [lib.cmark_find_syntax_extension(name.encode()) for name in _EXTENSIONS]
    if any(e == ffi.NULL for e in extensions):
        raise RuntimeError("cmark-gfm lacks one of the extensions " + ", ".join(_EXTENSIONS))
    options = 0  # CMARK_OPT_DEFAULT: safe mode (raw HTML and unsafe URLs dropped)
    node_free, c_free = _cmark_free_functions(_cmark.__file__)

    def render(text: str) -> str:
        data = text.encode("utf-8")
        parser = lib.cmark_parser_new(options)
        root = raw = None
        try:
            for ext in extensions:
                lib.cmark_parser_attach_syntax_extension(parser, ext)
            lib.cmark_parser_feed(parser, data, len(data))
            root = lib.cmark_parser_finish(parser)
            raw = lib.cmark_render_html(root, options, lib.cmark_parser_get_syntax_extensions(parser))
            return ffi.string(raw).decode("utf-8")
        finally:
            # The bindings free neither the document tree nor the rendered string: without
            # these two calls every text leaks several times its size (measured: 6.7 MB per
            # 174 kB text), which a long session or a bulk run turns into gigabytes.
            if raw is not None and raw != ffi.NULL:
                c_free(int(ffi.cast("uintptr_t", raw)))
            if root is not None and root != ffi.NULL:
                node_free(int(ffi.cast("uintptr_t", root)))
            lib.cmark_parser_free(parser)

    return render


def _cmark_free_functions(library: str) -> tuple[Callable[[int], None], Callable[[int], None]]:
    """``cmark_node_free`` and the C ``free`` (cmark's default allocator is the C heap's),
    which the cffi module does not export, from the same shared object through ctypes."""
    import ctypes

    so = ctypes.CDLL(library)
    node_free = so.cmark_node_free
    node_free.argtypes = [ctypes.c_void_p]
    node_free.restype = None
    c_free = ctypes.CDLL(None).free
    c_free.argtypes = [ctypes.c_void_p]
    c_free.restype = None
    return node_free, c_free


class MarkdownRenderer:
    def __init__(self, highlighter: Highlighter) -> None:
        self._render = _cmark_renderer()
        self._hl = highlighter

    def _code(self, m: re.Match[str]) -> str:
        lang = html.unescape(m.group(1)).replace(SENTINEL, "<")
        source = html.unescape(m.group(2).replace(SENTINEL, "<"))
        return self._hl.block(source, lang)

    def render_pieces(self, source: str, size: int) -> Iterator[str]:
        """``source`` rendered in pieces of about ``size`` characters (cmark's memory is
        many times the text it holds, so a huge text is never handed over whole). A piece
        ends at a blank line when one comes soon, else at a line end, never inside fenced
        code. A construct spanning a cut (a list with blank lines between its items, a
        paragraph of a great many lines) becomes two; the text is all there."""
        start, n = 0, len(source)
        while start < n:
            cut, pos, scanned, fence_open = n, start + size, start, False
            while pos < n:
                blank = source.find("\n\n", pos, pos + size)
                end = blank + 2 if blank >= 0 else source.find("\n", pos) + 1 or n
                # Fence lines since the last candidate flip the state.
                fence_open ^= len(_FENCE.findall(source, scanned, end)) % 2 == 1
                scanned = end
                if not fence_open:
                    cut = end
                    break
                # Inside fenced code: go on after the line of the fence that closes it.
                close = _FENCE.search(source, end)
                if close is None:
                    break
                fence_open = False
                pos = scanned = source.find("\n", close.end()) + 1 or n
            yield self.render(source[start:cut])
            start = cut

    def render(self, source: str) -> str:
        source = clean(source)
        if "<" in source:
            source = _HTML_START.sub(SENTINEL, source)
        out = self._render(source)
        if "<pre><code class=" in out:
            out = _CODE.sub(self._code, out)
        if "<a href=" in out:
            out = _A.sub(_link, out)
        if "<img " in out:
            out = _IMG.sub(_image, out)
        if " align=" in out:
            out = _ALIGN.sub(r'<\1 class="al-\2">', out)
        if SENTINEL in out:
            out = out.replace(SENTINEL, "&lt;")
        if "%EF%B7%90" in out:  # a swapped "<" inside a link destination, percent-encoded
            out = out.replace("%EF%B7%90", "%3C")
        # cmark writes XHTML-style void tags; HTML does not need the slash.
        return out.replace(" />", ">")
