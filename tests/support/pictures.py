"""Pictures of their own for uploads."""

import io

from PIL import Image


def picture(seed: int, *, size=(320, 400), fmt="PNG", **options) -> bytes:
    """A picture of its own (noise, so it does not compress to nothing)."""
    image = Image.effect_noise(size, 40 + seed).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()
