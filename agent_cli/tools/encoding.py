"""Text encodings of files: detect one (BOM, UTF-8, BOM-less UTF-16, then charset-normalizer), decode
with it, and encode back to the same bytes, so an edit changes only the edited part of a file.

A file is binary only when it has NUL bytes and is not UTF-16/32, or when no decoding fits.

A file that is UTF-8 but for a few bytes (a stray byte in Chinese text, a Latin-1 `é` pasted into a
UTF-8 file) is UTF-8 still (`UTF8_MOSTLY`): it has characters UTF-8 made of several bytes, no NUL, and
at most `MAX_BAD_SHARE` of its bytes (one at least) are not UTF-8, no more than its good characters.
Those bytes are decoded as lone surrogates (`surrogateescape`) and encoded back as the same bytes; the
model sees them as `\\xNN` (core/surrogates.py: shown_bytes).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS: tuple[tuple[bytes, str, str], ...] = (  # UTF-32 first: its LE BOM starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32BE"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16BE"),
)
_WIDE = ("utf_16", "utf_32", "utf-16", "utf-32")
_WESTERN = "cp1252"  # preferred among single-byte codecs that decode a sample the same way
_CONTROL_OK = frozenset("\t\n\r\f\v\b\x1b")
_WESTERN_MARKS = frozenset("€„…†‡‰‹›‘’“”•–—™«»°§©®±·¡¿£¥¢µ²³×÷\xa0")
MAX_BAD_SHARE = 0.01  # of a file's bytes, that may be not UTF-8 in a file read as UTF-8
_ESCAPED = re.compile("[\udc80-\udcff]")
_NON_ASCII = re.compile("[^\x00-\x7f]")


@dataclass(frozen=True)
class Encoding:
    """How a file's bytes map to text: `codec` (a Python codec name) for the body, after `bom`."""

    codec: str = "utf-8"
    bom: bytes = b""
    errors: str = "strict"  # "surrogateescape": UTF-8 with a few bytes that are not, kept as they are

    @property
    def label(self) -> str:
        if self.errors == "surrogateescape":
            return "UTF-8 with bytes that are not UTF-8"
        name = codecs.lookup(self.codec).name
        pretty = {
            "utf-8": "UTF-8",
            "utf-16-le": "UTF-16LE",
            "utf-16-be": "UTF-16BE",
            "utf-32-le": "UTF-32LE",
            "utf-32-be": "UTF-32BE",
        }.get(name, name)
        return f"{pretty} with BOM" if self.bom else pretty

    @property
    def is_utf8(self) -> bool:
        return codecs.lookup(self.codec).name == "utf-8" and not self.bom and self.errors == "strict"

    def decode(self, data: bytes) -> str:
        """The text of `data` (a whole file); UnicodeDecodeError when it does not fit."""
        if self.bom and data.startswith(self.bom):
            data = data[len(self.bom) :]
        return data.decode(self.codec, self.errors)

    def encode(self, text: str) -> bytes:
        """`text` as this encoding's bytes; UnicodeEncodeError for a character it cannot hold."""
        return self.bom + text.encode(self.codec, self.errors)


UTF8 = Encoding()
UTF8_MOSTLY = Encoding(errors="surrogateescape")


def detect(data: bytes, complete: bool = True) -> Encoding | None:
    """The encoding of `data` (a whole file when `complete`, else its first bytes), None for binary."""
    for bom, codec, _ in _BOMS:
        if data.startswith(bom):
            return Encoding(codec, bom) if _fits(data[len(bom) :], codec, complete) else None
    if not data:
        return UTF8
    if b"\x00" in data:
        return _bomless_wide(data, complete)
    if _fits(data, "utf-8", complete):
        return UTF8
    if _mostly_utf8(data, complete):
        return UTF8_MOSTLY
    return _guess(data, complete)


def decode_file(data: bytes) -> tuple[str, Encoding] | None:
    """(text, encoding) of a whole file's bytes, or None when it is binary."""
    encoding = detect(data)
    if encoding is None:
        return None
    try:
        return encoding.decode(data), encoding
    except UnicodeDecodeError:
        return None


def round_trips(data: bytes, text: str, encoding: Encoding) -> bool:
    """Whether writing `text` back in `encoding` gives `data` again (true for UTF-* and single-byte
    codecs; some multi-byte legacy codecs have two spellings of a character)."""
    try:
        return encoding.encode(text) == data
    except UnicodeEncodeError:
        return False


def unencodable(text: str, encoding: Encoding) -> str:
    """The characters of `text` that `encoding` cannot hold ('' when all fit), at most a few."""
    bad: list[str] = []
    for ch in dict.fromkeys(text):
        try:
            ch.encode(encoding.codec, encoding.errors)
        except UnicodeEncodeError:
            bad.append(ch)
            if len(bad) == 5:
                break
    return "".join(bad)


def line_ending(text: str) -> str:
    """'\\r\\n' when most line ends in `text` are CRLF, else '\\n'."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def with_line_ending(text: str, ending: str) -> str:
    """`text` with its bare LF line ends turned into `ending` (CRLF already there is kept)."""
    if ending != "\r\n" or "\n" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def looks_binary(data: bytes) -> bool:
    """For output that is not a file (a command's): more than a tenth of it is bytes that are
    neither UTF-8 nor ordinary control characters (NULs count; `find -print0` output stays text)."""
    if not data:
        return False
    text = data.decode("utf-8", errors="replace")
    odd = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in _CONTROL_OK))
    return odd > max(8, len(text) // 10)


# -- helpers -------------------------------------------------------------------------------------


def _fits(data: bytes, codec: str, complete: bool) -> bool:
    try:
        codecs.getincrementaldecoder(codec)().decode(data, final=complete)
    except UnicodeDecodeError:
        return False
    return True


def _mostly_utf8(data: bytes, complete: bool) -> bool:
    """UTF-8 but for a few bytes (`data` has no NUL): see the module's docstring."""
    text = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(data, final=complete)
    bad = len(_ESCAPED.findall(text))
    good = len(_NON_ASCII.findall(text)) - bad  # characters of several bytes
    return 0 < bad <= max(1, int(len(data) * MAX_BAD_SHARE)) and good >= bad


def _bomless_wide(data: bytes, complete: bool) -> Encoding | None:
    """UTF-16 without a BOM: mostly-ASCII text has a NUL in every other byte, on one side."""
    sample = data[:8192]
    pairs = len(sample) // 2
    if pairs < 2 or (complete and len(data) % 2):
        return None
    even = sum(1 for i in range(0, pairs * 2, 2) if sample[i] == 0)
    odd = sum(1 for i in range(1, pairs * 2, 2) if sample[i] == 0)
    if odd >= 0.7 * pairs and even <= 0.05 * pairs:
        codec = "utf-16-le"
    elif even >= 0.7 * pairs and odd <= 0.05 * pairs:
        codec = "utf-16-be"
    else:
        return None
    if not _fits(data, codec, complete):
        return None
    text = codecs.getincrementaldecoder(codec)(errors="replace").decode(sample[: pairs * 2])
    odd_chars = sum(1 for ch in text if not ch.isprintable() and ch not in _CONTROL_OK)
    return Encoding(codec) if odd_chars <= len(text) // 20 else None


def _guess(data: bytes, complete: bool) -> Encoding | None:
    """Non-UTF-8 text: cp1252 when it reads as Western text (what Latin-1 files usually are;
    charset-normalizer is unreliable on a few accented words), else charset-normalizer's pick, with
    cp1252 preferred among the best-scoring codecs that read the bytes alike."""
    sample = data if complete else data[:65536]
    if _reads_as_western(sample, complete):
        return Encoding(_WESTERN)
    from charset_normalizer import from_bytes

    matches = [m for m in from_bytes(sample) if not m.encoding.startswith(_WIDE)]
    if not matches:
        return None
    best = min(m.chaos for m in matches)
    tied = [m for m in matches if m.chaos <= best + 1e-9]
    if any(_WESTERN in m.could_be_from_charset for m in tied) and _fits(sample, _WESTERN, complete):
        return Encoding(_WESTERN)
    codec = tied[0].encoding
    return Encoding(codec) if _fits(sample, codec, complete) else None


def _reads_as_western(sample: bytes, complete: bool) -> bool:
    """Whether `sample` in cp1252 looks like Western European text: its non-ASCII characters are
    letters or common punctuation, few, and mostly alone between ASCII letters ("café", "Grüße").
    Another alphabet read as cp1252 gives runs of them ("Ïðèâåò" is "Привет" in cp1251)."""
    try:
        text = codecs.getincrementaldecoder(_WESTERN)().decode(sample, final=complete)
    except UnicodeDecodeError:
        return False
    high = [i for i, ch in enumerate(text) if ord(ch) > 127]
    if not high or len(high) * 5 > len(text):
        return False
    if any(not (text[i].isalpha() or text[i] in _WESTERN_MARKS) for i in high):
        return False
    if any(ch < " " and ch not in _CONTROL_OK for ch in text):
        return False
    positions = set(high)
    paired = sum(1 for i in high if i - 1 in positions or i + 1 in positions)
    return paired * 4 <= len(high)
