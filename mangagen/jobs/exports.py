"""A finished comic as pages: PNG pages, a PDF and a CBZ archive."""

from __future__ import annotations

import io
import zipfile

from PIL import Image, ImageDraw

from mangagen.renderers.procedural import font

from .models import Job, PanelState

PAGE_SIZE = (1240, 1754)  # A4 at 150 dpi
PANELS_PER_PAGE = 4
GUTTER = 36


def approved_images(job: Job) -> list[Image.Image]:
    images = []
    for panel in job.panels.filter(state=PanelState.APPROVED).order_by("index"):
        with panel.image.open("rb") as handle:
            images.append(Image.open(io.BytesIO(handle.read())).convert("RGB"))
    return images


def pages(job: Job) -> list[Image.Image]:
    """Lays the approved panels out, PANELS_PER_PAGE to a page, under a title."""
    images = approved_images(job)
    width, height = PAGE_SIZE
    result = []
    for start in range(0, len(images), PANELS_PER_PAGE):
        page = Image.new("RGB", PAGE_SIZE, "white")
        draw = ImageDraw.Draw(page)
        top = GUTTER
        if start == 0:
            title_font = font(54)
            draw.text((GUTTER, GUTTER), job.storyboard.title, font=title_font, fill="black")
            top += 54 + GUTTER
        slots = images[start : start + PANELS_PER_PAGE]
        slot_h = (height - top - GUTTER * (len(slots) + 1) - 40) / PANELS_PER_PAGE
        y = top
        for image in slots:
            scale = min((width - 2 * GUTTER) / image.width, slot_h / image.height)
            fitted = image.resize((int(image.width * scale), int(image.height * scale)))
            page.paste(fitted, ((width - fitted.width) // 2, int(y)))
            y += fitted.height + GUTTER
        number = start // PANELS_PER_PAGE + 1
        draw.text((width / 2 - 10, height - 60), str(number), font=font(28), fill="black")
        result.append(page)
    return result


def pdf_bytes(job: Job) -> bytes:
    rendered = pages(job)
    buffer = io.BytesIO()
    rendered[0].save(buffer, "PDF", save_all=True, append_images=rendered[1:], resolution=150)
    return buffer.getvalue()


def cbz_bytes(job: Job) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for number, page in enumerate(pages(job), start=1):
            png = io.BytesIO()
            page.save(png, "PNG")
            archive.writestr(f"page-{number:03d}.png", png.getvalue())
        archive.writestr(
            "ComicInfo.xml",
            '<?xml version="1.0" encoding="utf-8"?>\n<ComicInfo>'
            f"<Title>{_xml(job.storyboard.title)}</Title><Manga>Yes</Manga></ComicInfo>",
        )
    return buffer.getvalue()


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
