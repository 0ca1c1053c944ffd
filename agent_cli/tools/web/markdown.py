"""A fetched body as text the model reads: HTML as Markdown, text as it is.

HTML goes through **markdownify** (over BeautifulSoup's built-in parser), not trafilatura. Both are
maintained; the difference is what they promise. trafilatura *extracts*: it decides which part of a
page is the article and drops the rest, which is right for news and wrong often enough for
documentation (a parameter table, a code sample or a version note judged boilerplate is gone, and
nothing says so). markdownify *converts*: every heading, table, list, link and code block of the
page stays, in order. Size is not the converter's job here: a large page is offloaded (the model
gets a preview and a ref, and greps the rest with `recall`), or, with a `prompt`, the summarizer
reads it. What never carries content is removed first: `<script>`, `<style>`, `<noscript>`,
`<template>`, `<svg>`, `<iframe>`, `<head>` (the title is kept apart). Markdown's escapes of `_` and
`*` are off, so `snake_case` names stay greppable. BeautifulSoup is handed text, not bytes: the
encoding is the one a browser would pick (charset.py), never its statistical guess.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agent_cli.tools.web.charset import decode_page

DROPPED_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "head", "canvas", "object")
HTML_TYPES = ("text/html", "application/xhtml+xml")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


@dataclass(frozen=True)
class Text:
    text: str
    title: str = ""
    kind: str = "text"  # "markdown" (from HTML) | "text"


def page_text(body: bytes, media: str, charset: str) -> Text:
    """The body as text: HTML converted to Markdown, JSON pretty-printed, anything else decoded."""
    if media in HTML_TYPES or (
        not media and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    ):
        return html_to_markdown(body, charset)
    text = decode_page(body, charset, html=False)
    if media == "application/json" or media.endswith("+json"):
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pass
    return Text(text)


def html_to_markdown(body: bytes, charset: str = "") -> Text:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(decode_page(body, charset), "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(list(DROPPED_TAGS)):
        tag.decompose()
    converter = MarkdownConverter(
        heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False, escape_misc=False
    )
    text = converter.convert_soup(soup)
    return Text(_BLANK_LINES.sub("\n\n", text).strip() + "\n", title, "markdown")
