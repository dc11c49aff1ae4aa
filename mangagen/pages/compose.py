"""Drawing pages: each panel's kept art cropped into its frame, lettered, bordered.

A panel without kept art is drawn as a placeholder in its place (with its
lettering, so the page reads). Lettering is drawn at the size the panel is
shown, after cropping, in one type size for the whole page, sized for the page's
frames (`page_type_size`): a panel alone on a page, in a frame several times
larger, keeps its balloons in proportion to it. Art is never enlarged past
MAX_UPSCALE: a picture drawn smaller than its frame is shown at that scale at
most, centred on its faces, with paper around it, rather than visibly blown up
(`drawn_smaller` says when; the reader says so).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image, ImageDraw

from mangagen.lettering import Letterable, letter, lettering_font, one_line
from mangagen.lettering.fonts import title_face
from mangagen.lettering.report import Placed

from .layout import PAGE_MM, Page

DPI = 150
# Type on a page: TYPE_MM for frames of a page of several panels (REFERENCE_FRAME_MM2,
# about a third of a B5 page's live area), larger for a page whose frames are larger,
# in proportion to their side, up to MAX_TYPE_SCALE times.
TYPE_MM = 4.2
REFERENCE_FRAME_MM2 = 79.0 * 78.0
MAX_TYPE_SCALE = 2.5
# How far art may be enlarged to fill its frame before it shows (resampled smoothly).
MAX_UPSCALE = 1.5
STRIP_WIDTH = 800
STRIP_SPACING = 120
STRIP_HEAD = 160  # the strip's title
PANEL_ASPECT = 544 / 768  # a placeholder's shape, as the default render's
MAX_FRAME_ASPECT = 2.0  # a strip's frame is at most twice as tall as it is wide


@dataclass(frozen=True)
class PanelArt:
    """One panel as a page needs it: its lettering, and its kept art if there is any."""

    index: int
    letterable: Letterable
    load: Callable[[], bytes] | None  # the kept art's bytes; None when not drawn yet


def mm_to_px(mm: float, dpi: int = DPI) -> int:
    return round(mm * dpi / 25.4)


def page_size(dpi: int = DPI) -> tuple[int, int]:
    return mm_to_px(PAGE_MM[0], dpi), mm_to_px(PAGE_MM[1], dpi)


def compose_page(
    page: Page, *, arts: dict[int, PanelArt], direction: str, title: str = "", dpi: int = DPI
) -> Image.Image:
    width, height = page_size(dpi)
    canvas = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(canvas)
    type_size = page_type_size(page, dpi)
    for index, box in cells(page, dpi).items():
        size = (box[2] - box[0], box[3] - box[1])
        lettered = framed(arts[index], size, direction=direction, type_size=type_size)
        canvas.paste(lettered, box[:2])
        draw.rectangle(box, outline="black", width=border_width(dpi))
    draw_title(canvas, title if page.number == 1 else "", dpi)
    draw_folio(canvas, page.number, dpi)
    return canvas


def cells(page: Page, dpi: int = DPI) -> dict[int, tuple[int, int, int, int]]:
    """Each panel's cell on the page, in pixels (x0, y0, x1, y1)."""
    width, height = page_size(dpi)
    return {
        index: (round(fx0 * width), round(fy0 * height), round(fx1 * width), round(fy1 * height))
        for index, (fx0, fy0, fx1, fy1) in page.rects.items()
    }


def border_width(dpi: int = DPI) -> int:
    return max(2, round(dpi / 50))


def draw_title(image: Image.Image, title: str, dpi: int = DPI) -> None:
    """The comic's title in the head margin (page one's; nothing for an empty title)."""
    margin = mm_to_px(12, dpi)
    title = one_line(title)
    if title:
        ImageDraw.Draw(image).text(
            (margin, margin / 2),
            title,
            font=title_face(title, round(margin * 0.5)),
            fill="black",
            anchor="lm",
        )


def draw_folio(image: Image.Image, number: int, dpi: int = DPI) -> None:
    """The page's number, centred in the foot margin."""
    margin = mm_to_px(12, dpi)
    ImageDraw.Draw(image).text(
        (image.width / 2, image.height - margin / 2),
        f"— {number} —",
        font=lettering_font(round(margin * 0.4)),
        fill="black",
        anchor="mm",
    )


def page_type_size(page: Page, dpi: int = DPI) -> int:
    """The lettering's type size (pixels) on `page`: TYPE_MM, scaled up with the side of
    the page's median frame past REFERENCE_FRAME_MM2 (up to MAX_TYPE_SCALE times)."""
    areas = sorted(
        (x1 - x0) * PAGE_MM[0] * (y1 - y0) * PAGE_MM[1] for x0, y0, x1, y1 in page.rects.values()
    )
    if not areas:
        return mm_to_px(TYPE_MM, dpi)
    median = areas[len(areas) // 2]
    scale = min(MAX_TYPE_SCALE, max(1.0, (median / REFERENCE_FRAME_MM2) ** 0.5))
    return mm_to_px(TYPE_MM * scale, dpi)


def drawn_smaller(art_size: tuple[int, int], frame: tuple[int, int]) -> bool:
    """Whether art of `art_size` would have to be enlarged past MAX_UPSCALE to fill a
    frame of `frame` (pixels): then it is shown smaller than the frame."""
    return max(frame[0] / art_size[0], frame[1] / art_size[1]) > MAX_UPSCALE


def compose_strip(arts: list[PanelArt], *, direction: str, title: str = "") -> Image.Image:
    """A webtoon: one vertical strip, every panel full width, with room between them."""
    frames = []
    for art in arts:
        height = round(STRIP_WIDTH * _aspect(art))
        frames.append(framed(art, (STRIP_WIDTH, height), direction=direction))
    title = one_line(title)
    head = STRIP_HEAD if title else STRIP_SPACING // 2
    total = head + sum(f.height for f in frames) + STRIP_SPACING * len(frames)
    strip = Image.new("RGB", (STRIP_WIDTH + 80, total), "white")
    draw = ImageDraw.Draw(strip)
    if title:
        draw.text(
            (strip.width / 2, 80), title, font=title_face(title, 56), fill="black", anchor="mm"
        )
    y = head
    for frame in frames:
        strip.paste(frame, (40, y))
        draw.rectangle((40, y, 40 + frame.width, y + frame.height), outline="black", width=3)
        y += frame.height + STRIP_SPACING
    return strip


def framed(
    art: PanelArt,
    size: tuple[int, int],
    *,
    direction: str,
    type_size: int | None = None,
    report: list[Placed] | None = None,
) -> Image.Image:
    """The panel's art cropped to fill `size` (faces kept in view), with its lettering
    (`report` receives where each thing was lettered). Art that would have to be
    enlarged past MAX_UPSCALE is shown at that scale, centred, on paper."""
    if art.load is None:
        return letter(
            placeholder(art.index, size),
            panel=art.letterable,
            direction=direction,
            type_size=type_size,
            report=report,
        )
    fitted = fit(art, size)
    return letter(
        fitted.picture(size),
        panel=fitted.letterable,
        direction=direction,
        type_size=type_size,
        report=report,
    )


@dataclass(frozen=True)
class Fitted:
    """Kept art as a frame shows it: scaled to cover the frame (never enlarged past
    MAX_UPSCALE), where the scaled art's corner sits in the frame (`x`, `y`: negative
    where the frame crops it, positive where it was drawn smaller and sits on paper),
    and the lettering's panel with its faces where the frame sees them."""

    scaled: Image.Image
    x: int
    y: int
    letterable: Letterable

    def picture(self, size: tuple[int, int]) -> Image.Image:
        """The frame of `size` as it shows the art: cropped to it, or centred on paper."""
        if (self.x, self.y) == (0, 0) and self.scaled.size == size:
            return self.scaled
        frame = Image.new("RGB", size, "white")
        frame.paste(self.scaled, (self.x, self.y))
        return frame


def fit(art: PanelArt, size: tuple[int, int]) -> Fitted:
    """`art` (kept: `load` is set) scaled to cover a frame of `size` (at most MAX_UPSCALE
    times), the frame centred on the faces so that a tall frame does not cut heads off."""
    assert art.load is not None
    width, height = size
    source = Image.open(io.BytesIO(art.load())).convert("RGB")
    scale = min(MAX_UPSCALE, max(width / source.width, height / source.height))
    scaled = source.resize(
        (max(1, round(source.width * scale)), max(1, round(source.height * scale))), Image.LANCZOS
    )
    faces = art.letterable.faces
    if faces:  # centre the crop on the faces, so a tall frame does not cut heads off
        focus_x = sum(f.x for f in faces.values()) / len(faces) * scaled.width
        focus_y = sum(f.y for f in faces.values()) / len(faces) * scaled.height
    else:
        focus_x, focus_y = scaled.width / 2, scaled.height / 2
    x = min(0, max(-(scaled.width - width), round(width / 2 - focus_x)))
    y = min(0, max(-(scaled.height - height), round(height / 2 - focus_y)))
    # Drawn smaller than the frame (past MAX_UPSCALE): centred in it, on paper.
    x = (width - scaled.width) // 2 if scaled.width < width else x
    y = (height - scaled.height) // 2 if scaled.height < height else y
    moved = {
        name: type(f)(
            (f.x * scaled.width + x) / width,
            (f.y * scaled.height + y) / height,
            f.r * scaled.height / height,
        )
        for name, f in faces.items()
    }
    return Fitted(scaled, x, y, dataclasses.replace(art.letterable, faces=moved))


def _aspect(art: PanelArt) -> float:
    """The frame's height over its width in a strip: the art's, at most MAX_FRAME_ASPECT
    (a taller picture is cropped to it, as every frame crops its art), so one strip is
    at most 24 frames of STRIP_WIDTH × twice that."""
    if art.load is None:
        return PANEL_ASPECT
    with Image.open(io.BytesIO(art.load())) as image:
        return min(image.height / image.width, MAX_FRAME_ASPECT)


def placeholder(index: int, size: tuple[int, int]) -> Image.Image:
    image = Image.new("RGB", size, (236, 236, 236))
    draw = ImageDraw.Draw(image)
    step = max(12, size[0] // 24)
    for x in range(-size[1], size[0], step):  # light hatching: clearly not art
        draw.line((x, size[1], x + size[1], 0), fill=(222, 222, 222), width=2)
    label = f"Panel {index} · not drawn yet"
    font = lettering_font(max(12, size[1] // 12))
    room = size[0] * 0.9  # a narrow cell gets smaller words, never words cut at its edges
    if (width := draw.textlength(label, font=font)) > room:
        font = lettering_font(max(8, int(font.size * room / width)))
        if draw.textlength(label, font=font) > room:  # a tiny cell: its number alone
            label = str(index)
    draw.text((size[0] / 2, size[1] / 2), label, font=font, fill=(120, 120, 120), anchor="mm")
    return image


def compose_panel(
    art: PanelArt, *, direction: str, report: list[Placed] | None = None
) -> Image.Image:
    """One panel at its own size, lettered and bordered, as the job page shows it
    (`report` receives where each thing was lettered)."""
    with Image.open(io.BytesIO(art.load())) as source:
        size = source.size
    image = framed(art, size, direction=direction, report=report)
    ImageDraw.Draw(image).rectangle(
        (0, 0, size[0] - 1, size[1] - 1), outline="black", width=max(3, size[0] // 160)
    )
    return image
