"""Pictures of their own for uploads."""

import io

from PIL import Image


def picture(seed: int, *, size=(320, 400), fmt="PNG", **options) -> bytes:
    """A picture of its own (noise, so it does not compress to nothing)."""
    image = Image.effect_noise(size, 40 + seed).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def outline_likeness(rough: bytes, final: bytes, *, size=(192, 136)) -> float:
    """How alike the outlines of a rough and a final are, -1 to 1: the correlation of
    their edge maps at one small size, blurred a little (a line a pixel off still
    counts). The final's screentones are melted first (a median), so what is compared is
    where the figures and shapes are: the composition, not the rendering."""
    import numpy
    from PIL import ImageFilter

    def lines(png: bytes, *, melt: bool) -> numpy.ndarray:
        with Image.open(io.BytesIO(png)) as opened:
            image = opened.convert("L")
        if melt:
            image = image.filter(ImageFilter.MedianFilter(5))
        edges = image.filter(ImageFilter.FIND_EDGES).point(lambda v: 255 if v > 40 else 0)
        edges = edges.resize(size, Image.Resampling.BOX).filter(ImageFilter.GaussianBlur(1.5))
        values = numpy.asarray(edges, dtype=float)[2:-2, 2:-2]  # the filters' own border
        values = values - values.mean()
        return values.ravel() / (numpy.linalg.norm(values) or 1.0)

    return float(lines(rough, melt=False) @ lines(final, melt=True))
