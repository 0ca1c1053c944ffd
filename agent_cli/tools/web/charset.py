"""A fetched page's bytes as text. HTML is decoded the way a browser picks the encoding (the WHATWG
Encoding and HTML standards), not by guessing.

In order: a byte-order mark; the Content-Type header's charset; a `<meta charset>` (or `http-equiv`)
near the top; else UTF-8 when the bytes are valid UTF-8; else windows-1252, the default for Western
pages. A statistical guess (charset-normalizer) is wrong on exactly the pages that need it: a short
Latin-1 page ("café", "Straße") reads as cp1250, and the model gets wrong letters with no sign of it.
Labels are read as browsers read them: "iso-8859-1" and "ascii" mean windows-1252 (the bytes
0x80–0x9F are its curly quotes and dashes, not control characters); a `<meta>` claiming UTF-16 in
bytes that are plainly ASCII-compatible means UTF-8. A body cut at the byte limit mid-character
is still UTF-8 (the cut character is dropped). Text that is not HTML and declares nothing is read
as a file is (tools/encoding.py: UTF-8, a Western page, then charset-normalizer for other alphabets).
"""

from __future__ import annotations

import codecs

from agent_cli.tools.encoding import detect

_BOMS: tuple[tuple[bytes, str], ...] = (  # UTF-32 first: its LE BOM starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Python's name of a label -> the codec a browser uses for it (each reads the label's own bytes alike)
_AS_BROWSERS_READ = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "shift_jis": "cp932",
    "utf-16": "utf-16-le",  # without a BOM (a BOM is read first); Python's "utf-16" refuses a stream without
    "utf-32": "utf-32-le",
}
WESTERN = "cp1252"


def decode_page(body: bytes, declared: str = "", html: bool = True) -> str:
    """The text of a fetched `body`; `declared` is the Content-Type header's charset ("" if none).
    Not HTML and not declared: read as a file is (UTF-8, a Western page, else charset-normalizer's guess)."""
    codec, start = page_encoding(body, declared, html)
    return codecs.getincrementaldecoder(codec)(errors="replace").decode(body[start:], final=False)


def page_encoding(body: bytes, declared: str = "", html: bool = True) -> tuple[str, int]:
    """(codec, bytes to skip) for `body`: its BOM, the header's charset, then for HTML its `<meta>`,
    UTF-8 or windows-1252, and for other text tools/encoding.py's detection."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec, len(bom)
    if codec := codec_for(declared):
        return codec, 0
    if not html:
        found = detect(body, complete=False)
        return (found.codec, len(found.bom)) if found else ("utf-8", 0)
    if codec := codec_for(_meta_charset(body)):
        return ("utf-8" if codec.startswith(("utf-16", "utf-32")) else codec), 0
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)  # a cut last character is fine
    except UnicodeDecodeError:
        return WESTERN, 0
    return "utf-8", 0


def _meta_charset(body: bytes) -> str:
    from bs4.dammit import EncodingDetector

    return EncodingDetector.find_declared_encoding(body, is_html=True) or ""


def codec_for(label: str) -> str:
    """The codec a browser decodes `label` with; "" for no label, or one Python cannot use to decode
    a page whatever its bytes ("base64" and "zlib" are not text encodings; "idna" refuses replacing)."""
    label = label.strip().strip("\"'").lower()
    if label == "x-user-defined":
        return WESTERN
    try:
        name = codecs.lookup(label).name
        name = _AS_BROWSERS_READ.get(name, name)
        "".encode(name)  # LookupError for a codec from bytes to bytes
        codecs.getincrementaldecoder(name)(errors="replace").decode(b"<\xe9\xff\x00>", final=False)
    except (LookupError, ValueError):  # UnicodeError is a ValueError
        return ""
    return name
