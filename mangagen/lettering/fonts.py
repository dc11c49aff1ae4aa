"""The shipped lettering fonts, installed as Python packages: no download at run time.

Kalam (OFL, `fontpkg-kalam`) is a hand-lettered face that stays readable
small, as comic lettering should; Noto Sans CJK (OFL,
`cvttf-NotoSansCJK-Regular`) carries kana and kanji for Japanese dialogue.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

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


@lru_cache(maxsize=32)
def cjk_font(size: int) -> ImageFont.FreeTypeFont:
    return _load(_noto_cjk(), size)
