"""Images a person attaches or the model reads: opened with Pillow, checked, scaled down to what the
Messages API takes (a long edge of at most 1568 px, ~1.15 megapixels, 5 MB of base64), and costed
in tokens (≈ width × height / 750, core/images.py). `load.py` is the one entry: `load_image(path)`,
or `image_from_bytes(raw, shown)` for an image that is not a file (an MCP tool's).
"""

from agent_cli.tools.images.load import LoadedImage, image_from_bytes, load_image

__all__ = ["LoadedImage", "image_from_bytes", "load_image"]
