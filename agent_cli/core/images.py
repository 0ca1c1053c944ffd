"""Images as the Messages API takes them: which formats, how large, what they cost in tokens.

Pure header reading (no Pillow here, it is tools/images/'s business): the dimensions of a PNG, JPEG,
GIF or WebP from its first bytes, so the token count of an image already in the view is known
without decoding it. The API's own figures: an image costs about width x height / 750 tokens; one
whose long edge is over 1568 px, or that is over ~1.15 megapixels, is scaled down by the API first;
over 8000 px on a side, or 5 MB of base64, it is refused.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
EXTENSIONS[".webp"] = "image/webp"
MAX_EDGE = 1568  # px: a longer edge is scaled down by the API (we do it first, with Pillow)
MAX_PIXELS = 1_150_000  # ~1,533 tokens: the API scales larger images down too
MAX_BASE64 = 5 * 1024 * 1024  # bytes of base64 the API takes for one image
TOKENS_PER_PIXEL = 1 / 750
UNKNOWN_TOKENS = 1_600  # an image whose header we cannot read: the API's ceiling
_HEAD_BASE64 = 87_384  # base64 characters decoded to find a JPEG's size (64 KiB of bytes)


def sniff_media_type(head: bytes) -> str | None:
    """The image type by its magic bytes (never by the file name); None when it is not one of ours."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) read from the first bytes of a PNG, GIF, WebP or JPEG; None when unknown."""
    kind = sniff_media_type(head)
    try:
        if kind == "image/png" and head[12:16] == b"IHDR":
            return struct.unpack(">II", head[16:24])
        if kind == "image/gif":
            return struct.unpack("<HH", head[6:10])
        if kind == "image/webp":
            return _webp_size(head)
        if kind == "image/jpeg":
            return _jpeg_size(head)
    except struct.error:
        return None
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    """The frame size from the first SOFn marker (segments before it are skipped by their length)."""
    at = 2
    while at + 9 < len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # markers without a length
            at += 2
            continue
        length = struct.unpack(">H", head[at + 2 : at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def tokens_for(width: int, height: int) -> int:
    """What an image of this size costs the model, after the API's own scaling (≈ w·h / 750)."""
    if width <= 0 or height <= 0:
        return UNKNOWN_TOKENS
    scale = min(1.0, MAX_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return max(1, math.ceil(width * scale * height * scale * TOKENS_PER_PIXEL))


def base64_size(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 image, decoding only its head."""
    head = data[:_HEAD_BASE64]
    head = head[: len(head) - len(head) % 4]
    try:
        return image_size(base64.b64decode(head, validate=False))
    except (binascii.Error, ValueError):
        return None


def base64_tokens(data: str) -> int:
    """The token cost of a base64 image (the API's ceiling when its header cannot be read)."""
    size = base64_size(data)
    return tokens_for(*size) if size else UNKNOWN_TOKENS


def data_url(media_type: str, data: str) -> str:
    """An image as one text (RFC 2397), the form the recall store keeps it in."""
    return f"data:{media_type};base64,{data}"


def parse_data_url(text: str) -> tuple[str, str] | None:
    """(media type, base64) of a data URL of one of our image types; None for anything else."""
    if not text.startswith("data:image/"):
        return None
    header, sep, data = text.partition(",")
    media_type = header.removeprefix("data:").removesuffix(";base64")
    if not sep or not header.endswith(";base64") or media_type not in MEDIA_TYPES:
        return None
    return media_type, data
