"""Files keep their encoding, BOM and line endings through read, edit and write (issue 10, point 9)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from agent_cli.tools.encoding import UTF8_MOSTLY, Encoding, detect, looks_binary

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
)

LATIN1 = "Le café est très bon.\r\nÇa coûte 3 € — naïve façade.\r\nFin.\r\n"


async def test_latin1_crlf_file_edited_in_place_keeps_every_other_byte(ws: Path, call) -> None:
    original = LATIN1.encode("cp1252")
    (ws / "menu.txt").write_bytes(original)

    read = await call("read_file", path="menu.txt")
    assert not read.is_error
    assert "Le café est très bon." in read.output and "3 €" in read.output
    assert read.meta["encoding"] == "cp1252"

    edit = await call("edit_file", path="menu.txt", old_string="très bon", new_string="délicieux")
    assert not edit.is_error, edit.output

    after = (ws / "menu.txt").read_bytes()
    expected = original.replace("très bon".encode("cp1252"), "délicieux".encode("cp1252"))
    assert after == expected
    assert after.count(b"\r\n") == 3 and b"\xc3" not in after  # still CRLF, not UTF-8


async def test_lines_added_to_a_crlf_latin1_file_end_in_crlf(ws: Path, call) -> None:
    (ws / "menu.txt").write_bytes(LATIN1.encode("cp1252"))
    edit = await call("edit_file", path="menu.txt", old_string="Fin.", new_string="Crème brûlée.\nFin.")
    assert not edit.is_error, edit.output
    after = (ws / "menu.txt").read_bytes()
    assert after.endswith("Crème brûlée.\r\nFin.\r\n".encode("cp1252"))
    assert after.count(b"\n") == after.count(b"\r\n")


async def test_a_character_the_encoding_cannot_hold_is_refused_and_nothing_changes(ws: Path, call) -> None:
    original = LATIN1.encode("cp1252")
    (ws / "menu.txt").write_bytes(original)
    edit = await call("edit_file", path="menu.txt", old_string="Fin.", new_string="Fin → ✓")
    assert edit.is_error
    assert "cp1252" in edit.output and "'→'" in edit.output
    assert (ws / "menu.txt").read_bytes() == original


async def test_write_over_a_latin1_crlf_file_keeps_encoding_and_line_ends(ws: Path, call) -> None:
    (ws / "menu.txt").write_bytes(LATIN1.encode("cp1252"))
    result = await call("write_file", path="menu.txt", content="Déjà vu.\nÀ bientôt.\n")
    assert not result.is_error and "cp1252" in result.output
    assert (ws / "menu.txt").read_bytes() == "Déjà vu.\r\nÀ bientôt.\r\n".encode("cp1252")


@pytest.mark.parametrize(
    ("codec", "bom"), [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE)]
)
async def test_utf16_with_bom_reads_as_text_and_an_edit_keeps_bom_and_endianness(
    ws: Path, call, codec: str, bom: bytes
) -> None:
    original = bom + 'name = "Zoë"\r\ncount = 1\r\n'.encode(codec)
    (ws / "conf.ini").write_bytes(original)

    read = await call("read_file", path="conf.ini")
    assert not read.is_error
    assert read.output == '     1\tname = "Zoë"\n     2\tcount = 1'
    assert read.meta["encoding"] == f"{codec.upper().replace('UTF-16-', 'UTF-16')} with BOM"

    edit = await call("edit_file", path="conf.ini", old_string="count = 1", new_string="count = 2")
    assert not edit.is_error, edit.output
    expected = original.replace("count = 1".encode(codec), "count = 2".encode(codec))
    assert (ws / "conf.ini").read_bytes() == expected


async def test_utf16_without_bom_reads_as_text(ws: Path, call) -> None:
    (ws / "log.txt").write_bytes("first line\nsecond line, naïve\n".encode("utf-16-le"))
    read = await call("read_file", path="log.txt")
    assert not read.is_error
    assert read.output == "     1\tfirst line\n     2\tsecond line, naïve"


async def test_utf8_bom_is_kept_by_edit_and_write(ws: Path, call) -> None:
    (ws / "a.cs").write_bytes(codecs.BOM_UTF8 + b"class A {}\n")
    read = await call("read_file", path="a.cs")
    assert read.output == "     1\tclass A {}"  # the BOM is not shown as a character
    await call("edit_file", path="a.cs", old_string="class A", new_string="class B")
    assert (ws / "a.cs").read_bytes() == codecs.BOM_UTF8 + b"class B {}\n"
    await call("write_file", path="a.cs", content="class C {}\n")
    assert (ws / "a.cs").read_bytes() == codecs.BOM_UTF8 + b"class C {}\n"


async def test_cyrillic_cp1251_reads_as_cyrillic(ws: Path, call) -> None:
    (ws / "ru.txt").write_bytes("Привет, мир! Это проверка кодировки.\n".encode("cp1251"))
    read = await call("read_file", path="ru.txt")
    assert not read.is_error and "Привет, мир!" in read.output


async def test_png_is_still_refused_as_binary(ws: Path, call) -> None:
    (ws / "logo.png").write_bytes(PNG)
    result = await call("edit_file", path="logo.png", old_string="IHDR", new_string="XXXX")
    assert result.is_error and "binary file" in result.output and "PNG" in result.output
    read = await call("read_file", path="logo.png")  # read_file opens images: this one is cut short
    assert read.is_error and read.image is None and read.output.startswith("logo.png: a corrupt")
    assert (ws / "logo.png").read_bytes() == PNG


async def test_new_files_are_utf8(ws: Path, call) -> None:
    await call("write_file", path="new.txt", content="café\n")
    assert (ws / "new.txt").read_bytes() == "café\n".encode()


ZH = "第一行：你好世界\n第二行：坏{bad}字节\n第三行：结束\n"
ZH_BYTES = ZH.format(bad="").encode().replace("坏".encode(), "坏".encode() + b"\xff")


async def test_utf8_text_with_one_bad_byte_reads_as_utf8_the_byte_shown_as_an_escape(ws: Path, call) -> None:
    (ws / "zh.txt").write_bytes(ZH_BYTES)
    read = await call("read_file", path="zh.txt")
    assert not read.is_error, read.output
    assert read.output == "     1\t第一行：你好世界\n     2\t第二行：坏\\xff字节\n     3\t第三行：结束"
    assert read.meta["encoding"] == "UTF-8 with bytes that are not UTF-8"


async def test_an_edit_elsewhere_keeps_the_bad_byte_and_one_across_it_takes_the_escape(
    ws: Path, call
) -> None:
    (ws / "zh.txt").write_bytes(ZH_BYTES)
    edit = await call("edit_file", path="zh.txt", old_string="结束", new_string="完成")
    assert not edit.is_error, edit.output
    assert (ws / "zh.txt").read_bytes() == ZH_BYTES.replace("结束".encode(), "完成".encode())
    assert "坏\\xff字节" in edit.output  # its snippet shows the byte as read_file does
    edit = await call("edit_file", path="zh.txt", old_string="坏\\xff字节", new_string="好字节")
    assert not edit.is_error, edit.output
    assert (ws / "zh.txt").read_bytes() == "第一行：你好世界\n第二行：好字节\n第三行：完成\n".encode()


async def test_a_mostly_utf8_file_is_not_read_as_cp1252(ws: Path, call) -> None:
    data = "menu: café crème\n".encode() * 3 + b"price: 3\xa4\n"
    (ws / "menu.txt").write_bytes(data)
    read = await call("read_file", path="menu.txt")
    assert "café crème" in read.output and "Ã" not in read.output and "3\\xa4" in read.output
    write = await call("edit_file", path="menu.txt", old_string="price", new_string="prix")
    assert not write.is_error and (ws / "menu.txt").read_bytes() == data.replace(b"price", b"prix")
    write = await call("write_file", path="menu.txt", content="menu: thé\n")
    assert (
        write.output == "Overwrote menu.txt (1 line; was 4 lines)."
        and "Kept its encoding" not in write.output
    )
    assert (ws / "menu.txt").read_bytes() == "menu: thé\n".encode()


def test_detect_names_what_it_finds() -> None:
    assert detect(b"plain ascii\n") == Encoding("utf-8")
    assert detect("x = 'é'\n".encode()) == Encoding("utf-8")
    assert detect(codecs.BOM_UTF8 + b"x") == Encoding("utf-8", codecs.BOM_UTF8)
    assert detect(codecs.BOM_UTF32_LE + "hi".encode("utf-32-le")) == Encoding(
        "utf-32-le", codecs.BOM_UTF32_LE
    )
    assert detect(b"caf\xe9\r\n") == Encoding("cp1252")  # not UTF-16BE, not cp1250
    assert detect(b"caf\xe9 cr\xe8me \xc3\xa9\n") == Encoding("cp1252")  # as many bad bytes as good
    assert detect(ZH_BYTES) == UTF8_MOSTLY
    assert detect(ZH_BYTES + b"\x00") is None  # a NUL: not text
    assert detect(ZH_BYTES * 2 + b"\xff" * 3) != UTF8_MOSTLY  # over 1% of its bytes are not UTF-8
    assert detect(PNG) is None
    assert Encoding("cp1252").label == "cp1252"
    assert Encoding("utf-16-le", codecs.BOM_UTF16_LE).label == "UTF-16LE with BOM"


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Prix: 3 €\r\nCafé crème\r\n", "cp1252"),
        ("¿Qué tal, señor Núñez? 25 m² – “déjà vu”\n", "cp1252"),
        ("Straße, Größe, Übermaß\n", "cp1252"),
        ("Zażółć gęślą jaźń, mówię po polsku\n", "cp1250"),
        ("Привет мир, это проверка кодировки\n", "cp1251"),
        ("Ελληνικά κείμενο εδώ για δοκιμή\n", "cp1253"),
    ],
)
def test_legacy_codecs_are_told_apart(text: str, codec: str) -> None:
    data = text.encode(codec)
    found = detect(data)
    assert found is not None and found.decode(data) == text


def test_command_output_that_is_binary_is_told_apart_from_text() -> None:
    assert looks_binary(PNG * 20)
    assert looks_binary(bytes(range(256)) * 4)
    assert not looks_binary(b"./a.txt\x00./b.txt\x00./some/longer/name.py\x00")  # find -print0
    assert not looks_binary("Grüße aus Köln, dies ist ein Test\n".encode("latin-1"))
    assert not looks_binary(b"\x1b[31mred\x1b[0m\n")
