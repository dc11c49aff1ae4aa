"""The shipped lettering fonts, installed as Python packages: no download at run time.

Kalam (OFL, `fontpkg-kalam`) is a hand-lettered face that stays readable
small, as comic lettering should, and covers the Latin script; Noto Sans CJK
(OFL, `cvttf-NotoSansCJK-Regular`) carries kana, kanji, hangul, Greek and
Cyrillic. `face_for()` letters a text in Kalam when Kalam has every one of
its glyphs, and in Noto Sans CJK otherwise, so a Russian or Korean line is
never drawn as empty boxes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

PROBE_SIZE = 32  # the size glyph coverage is looked up at (it is the same at every size)
FALLBACKS = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
]


def _kalam(weight: str) -> Path | None:
    try:
        import fontpkg_kalam
    except ImportError:
        return None
    path = Path(fontpkg_kalam.ROOT) / "files" / f"Kalam-{weight}.ttf"
    return path if path.exists() else None


def _noto_cjk() -> Path | None:
    try:
        import cvttf_NotoSansCJK_Regular
    except ImportError:
        return None
    return Path(cvttf_NotoSansCJK_Regular.get_TTF_path())


def _load(path: Path | None, size: int) -> ImageFont.FreeTypeFont:
    if path is not None:
        return ImageFont.truetype(str(path), size)
    for fallback in FALLBACKS:
        if Path(fallback).exists():
            return ImageFont.truetype(fallback, size)
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=64)
def lettering_font(size: int) -> ImageFont.FreeTypeFont:
    return _load(_kalam("Regular"), size)


@lru_cache(maxsize=16)
def title_font(size: int) -> ImageFont.FreeTypeFont:
    return _load(_kalam("Bold"), size)


# Each face loaded is kept, and Noto Sans CJK's take about 0.9 MB each: 16 sizes at most
# (sound effects' sizes are stepped, sound_effects.stepped, so few are asked for).
@lru_cache(maxsize=16)
def cjk_font(size: int) -> ImageFont.FreeTypeFont:
    return _load(_noto_cjk(), size)


def face_for(text: str, size: int) -> ImageFont.FreeTypeFont:
    """The lettering face for `text`: Kalam if it has every glyph, else Noto Sans CJK."""
    return lettering_font(size) if covers(lettering_font(PROBE_SIZE), text) else cjk_font(size)


def title_face(text: str, size: int) -> ImageFont.FreeTypeFont:
    """The title face for `text`: Kalam Bold if it has every glyph, else Noto Sans CJK."""
    return title_font(size) if covers(title_font(PROBE_SIZE), text) else cjk_font(size)


def covers(font: ImageFont.FreeTypeFont, text: str) -> bool:
    """Whether `font` has a glyph of its own for every character of `text`."""
    return all(_has_glyph(font, char) for char in set(text) if not char.isspace())


@lru_cache(maxsize=8192)
def _has_glyph(font: ImageFont.FreeTypeFont, char: str) -> bool:
    # A character the font lacks is drawn as its "missing" glyph, which is what a
    # noncharacter (U+FFFF, in no font) draws too.
    missing = font.getmask("\uffff")
    drawn = font.getmask(char)
    return drawn.size != missing.size or bytes(drawn) != bytes(missing)
