"""Images a person attaches or the model reads: opened with Pillow, checked, scaled down to what the
Messages API takes (a long edge of at most 1568 px, ~1.15 megapixels, 5 MB of base64), and costed
in tokens (≈ width × height / 750, core/images.py). `load.py` is the one entry: `load_image(path)`.
"""

from agent_cli.tools.images.load import LoadedImage, load_image

__all__ = ["LoadedImage", "load_image"]
