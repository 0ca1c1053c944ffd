"""Open an image file for the model: PNG, JPEG, GIF or WebP (by its bytes, not its name).

Within the API's limits the file is sent as it is; over them (a long edge over 1568 px, more than
~1.15 megapixels, or over 5 MB of base64) it is scaled down with Pillow, keeping its aspect ratio,
and re-encoded (PNG when it has transparency or was a PNG/GIF, else JPEG) until it fits. A file that
is not an image we take, is corrupt, or is beyond what we open (`MAX_FILE_BYTES`, Pillow's
decompression-bomb ceiling) raises a ToolError with one line saying so.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.errors import ToolError
from agent_cli.core.images import MAX_BASE64, MAX_EDGE, MAX_PIXELS, sniff_media_type, tokens_for
from agent_cli.tools.base import ImagePart

MAX_FILE_BYTES = 64 * 1024 * 1024  # larger files are refused before Pillow reads them
JPEG_QUALITIES = (85, 70, 55)
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


@dataclass(frozen=True)
class LoadedImage:
    media_type: str
    data: str  # base64, what the API gets
    width: int
    height: int
    original: tuple[int, int]  # the file's own size in pixels
    file_bytes: int

    @property
    def resized(self) -> bool:
        return (self.width, self.height) != self.original

    @property
    def tokens(self) -> int:
        return tokens_for(self.width, self.height)

    @property
    def part(self) -> ImagePart:
        return ImagePart(self.media_type, self.data)

    def caption(self, shown: str) -> str:
        """The line the model reads beside the image."""
        kind = _kind(self.media_type)
        size = f"{self.width}x{self.height}"
        if self.resized:
            size += f", scaled down from {self.original[0]}x{self.original[1]}"
        return f"[image {shown}: {kind}, {size}, ≈{self.tokens:,} tokens]"


def is_image(path: Path) -> bool:
    """Whether the file starts like one of the image types we send (a cheap look at 16 bytes)."""
    if not path.is_file():  # a FIFO or a device is never opened here
        return False
    try:
        with open(path, "rb") as f:
            return sniff_media_type(f.read(16)) is not None
    except OSError:
        return False


def load_image(path: Path, shown: str | None = None) -> LoadedImage:
    """The image at `path`, within the API's limits. ToolError (one line) when it cannot be."""
    shown = shown or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(
                f"{shown}: image too large to attach ({size / 1e6:.1f} MB; the limit is "
                f"{MAX_FILE_BYTES // (1024 * 1024)} MB) — scale it down first"
            )
        raw = path.read_bytes()
    except PermissionError as exc:
        raise ToolError(f"{shown}: permission denied") from exc
    except OSError as exc:
        raise ToolError(f"{shown}: cannot read ({exc.strerror or exc})") from exc
    return image_from_bytes(raw, shown)


def image_from_bytes(raw: bytes, shown: str) -> LoadedImage:
    """An image's bytes (an MCP server's, say), within the API's limits. ToolError (one line) when
    they cannot be: not an image we send, corrupt, or too large."""
    if len(raw) > MAX_FILE_BYTES:
        raise ToolError(
            f"{shown}: image too large ({len(raw) / 1e6:.1f} MB; the limit is "
            f"{MAX_FILE_BYTES // (1024 * 1024)} MB)"
        )
    media_type = sniff_media_type(raw[:16])
    if media_type is None:
        raise ToolError(f"{shown}: not a PNG, JPEG, GIF or WebP image")
    return _fit(raw, media_type, shown)


def _fit(raw: bytes, media_type: str, shown: str) -> LoadedImage:
    from PIL import Image, ImageOps, UnidentifiedImageError  # lazy: Pillow costs ~50 ms to import

    try:
        with Image.open(io.BytesIO(raw)) as image:
            image.load()  # decodes it all: a truncated or corrupt file fails here, not at the API
            original = image.size
            found = _FORMATS.get(image.format or "")
            if found is None:
                raise ToolError(f"{shown}: not a PNG, JPEG, GIF or WebP image")
            if _within_limits(original, len(raw)):
                data = base64.b64encode(raw).decode("ascii")
                return LoadedImage(found, data, *original, original, len(raw))
            fitted = ImageOps.exif_transpose(image) or image
            fitted.thumbnail(_target(fitted.size), Image.Resampling.LANCZOS)
            media, encoded = _encode(fitted, found)
            data = base64.b64encode(encoded).decode("ascii")
            return LoadedImage(media, data, fitted.width, fitted.height, original, len(raw))
    except Image.DecompressionBombError as exc:
        raise ToolError(f"{shown}: too many pixels to open safely ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ToolError(f"{shown}: a corrupt {_kind(media_type)} image (Pillow cannot decode it)") from exc
    except (OSError, SyntaxError, ValueError) as exc:
        reason = str(exc).split("\n")[0] or type(exc).__name__
        raise ToolError(f"{shown}: a corrupt {_kind(media_type)} image ({reason})") from exc


def _kind(media_type: str) -> str:
    return media_type.removeprefix("image/").upper()


def _within_limits(size: tuple[int, int], raw_bytes: int) -> bool:
    width, height = size
    encoded = math.ceil(raw_bytes / 3) * 4
    return max(width, height) <= MAX_EDGE and width * height <= MAX_PIXELS and encoded <= MAX_BASE64


def _target(size: tuple[int, int]) -> tuple[int, int]:
    width, height = size
    scale = min(1.0, MAX_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


def _encode(image, media_type: str) -> tuple[str, bytes]:
    """PNG for pictures with transparency or that were PNG/GIF (screenshots, diagrams), unless that
    is over the API's size; JPEG otherwise, at falling quality until it fits."""
    alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    if alpha or media_type in ("image/png", "image/gif"):
        out = io.BytesIO()
        image.save(out, "PNG", optimize=True)
        if math.ceil(out.tell() / 3) * 4 <= MAX_BASE64:
            return "image/png", out.getvalue()
    rgb = image.convert("RGB")
    for quality in JPEG_QUALITIES:
        out = io.BytesIO()
        rgb.save(out, "JPEG", quality=quality, optimize=True)
        if math.ceil(out.tell() / 3) * 4 <= MAX_BASE64:
            break
    return "image/jpeg", out.getvalue()
