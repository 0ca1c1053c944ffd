"""Images for the model: sizes read from headers, files within the API's limits sent as they are, larger
ones scaled down with Pillow, bad ones one clear line; read_file returns an image, recall gives a
cleared one back."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from agent_cli.context.store import MemoryStore
from agent_cli.core.errors import ToolError
from agent_cli.core.images import base64_size, data_url, image_size, parse_data_url, tokens_for
from agent_cli.tools.base import ToolContext
from agent_cli.tools.images import load
from agent_cli.tools.images.load import load_image
from agent_cli.tools.recall import RecallTool


def _encoded(size: tuple[int, int], fmt: str, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (10, 20, 30) if mode == "RGB" else (10, 20, 30, 128)).save(out, fmt)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_sizes_come_from_the_header(fmt: str):
    data = _encoded((321, 123), fmt)
    assert image_size(data[: 64 * 1024]) == (321, 123)
    assert base64_size(base64.b64encode(data).decode()) == (321, 123)


def test_tokens_follow_the_api_formula_and_its_scaling():
    assert tokens_for(750, 100) == 100  # width x height / 750
    assert tokens_for(1000, 1000) == 1334
    assert 1_530 <= tokens_for(4000, 4000) <= 1_534  # scaled to ~1.15 MP first: ≈1,533


def test_an_image_within_the_limits_is_sent_as_it_is(tmp_path: Path):
    raw = _encoded((800, 600), "PNG")
    (tmp_path / "a.png").write_bytes(raw)
    image = load_image(tmp_path / "a.png", "a.png")
    assert base64.b64decode(image.data) == raw and not image.resized
    assert (image.media_type, image.width, image.height, image.tokens) == ("image/png", 800, 600, 640)
    assert image.caption("a.png") == "[image a.png: PNG, 800x600, ≈640 tokens]"


def test_a_large_image_is_scaled_down_keeping_transparency(tmp_path: Path):
    (tmp_path / "photo.jpg").write_bytes(_encoded((4000, 3000), "JPEG"))
    photo = load_image(tmp_path / "photo.jpg")
    assert photo.media_type == "image/jpeg" and photo.original == (4000, 3000)
    assert max(photo.width, photo.height) <= 1568 and photo.width * photo.height <= 1_150_000
    assert abs(photo.width / photo.height - 4 / 3) < 0.01  # the aspect ratio is kept
    (tmp_path / "ui.png").write_bytes(_encoded((3000, 500), "PNG", "RGBA"))
    ui = load_image(tmp_path / "ui.png")
    assert ui.media_type == "image/png" and 1560 <= ui.width <= 1568 and ui.height == 261
    assert Image.open(io.BytesIO(base64.b64decode(ui.data))).mode == "RGBA"


def test_bad_images_are_one_clear_line(tmp_path: Path, monkeypatch):
    (tmp_path / "cut.png").write_bytes(_encoded((900, 900), "PNG")[:300])
    with pytest.raises(ToolError, match=r"^cut\.png: a corrupt PNG image \("):
        load_image(tmp_path / "cut.png", "cut.png")
    (tmp_path / "fake.png").write_bytes(b"not an image at all")
    with pytest.raises(ToolError, match=r"^fake\.png: not a PNG, JPEG, GIF or WebP image$"):
        load_image(tmp_path / "fake.png", "fake.png")
    (tmp_path / "huge.png").write_bytes(_encoded((100, 100), "PNG"))
    monkeypatch.setattr(load, "MAX_FILE_BYTES", 100)
    with pytest.raises(
        ToolError, match=r"^huge\.png: image too large to attach \(0\.0 MB; the limit is 0 MB\)"
    ):
        load_image(tmp_path / "huge.png", "huge.png")


async def test_read_file_returns_an_image_and_recall_gives_a_cleared_one_back(ws: Path, call, ctx):
    (ws / "shot.png").write_bytes(_encoded((400, 300), "PNG"))
    result = await call("read_file", path="shot.png")
    assert not result.is_error and result.output == "[image shot.png: PNG, 400x300, ≈160 tokens]"
    assert result.image is not None and result.image.media_type == "image/png"
    store = MemoryStore()
    store.put("rimage1", f"{result.output}\n{data_url(result.image.media_type, result.image.data)}")
    back = await RecallTool().run({"ref": "rimage1"}, ToolContext(workspace=ws, store=store))
    assert back.output == f"[rimage1: image, 400x300]\n{result.output}" and back.image == result.image
    assert parse_data_url("data:text/plain;base64,eA==") is None  # only our image types
