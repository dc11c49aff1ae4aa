"""The layered export (issue #51): a page as a PSD with editable text, read back by two
readers that share no code with the writer's type layers: psd-tools (which wrote the
rest of the file, so it checks the type tool block written by hand) and psdparse (a C++
reader of its own, which checks everything again); and as OpenRaster.

Asserted on each page: its size and resolution, one group per panel, the art layer's
pixels equal to the kept take scaled as the page scales it and masked to its cell, a
type layer per line whose text is the line's (vertical in Japanese) over a hidden raster
copy of the same pixels, a layer per sound effect, and the layers together giving the
page the reader shows; and, opened in GIMP (Debian's `gimp`, headless), flattening to
that page.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import psdparse
import pytest
from PIL import Image, ImageChops
from psd_tools import PSDImage
from psd_tools.constants import Resource

from mangagen.pages.builds import comic_of
from mangagen.pages.compose import cells, fit, page_size, page_type_size
from tests.support.pages import page_png

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(
        title="Rooftops",
        characters=[{"name": "Aiko"}, {"name": "Kenji"}],
        panels=[
            {
                "description": "A rooftop at night.",
                "shot": "establishing",
                "caption": "Neo-Kyoto, 2 a.m.",
                "sfx": [{"text": "WHOOSH", "x": 0.3, "y": 0.7, "angle": 12}],
            },
            {
                "description": "Aiko turns.",
                "shot": "medium",
                "characters": ["Aiko"],
                "dialogue": [
                    {"speaker": "Aiko", "text": "Who's there? (Show yourself!)"},
                    {"speaker": "", "text": "Somewhere, a door creaks."},
                ],
                "sfx": [{"text": "KREEEK", "x": 0.7, "y": 0.8}],
            },
            {
                "description": "Kenji grins.",
                "shot": "close-up",
                "characters": ["Kenji"],
                "dialogue": [{"speaker": "Kenji", "text": "Only me!", "style": "shout"}],
            },
        ],
    ),
]

TOLERANCE = 2  # levels of 255: the anti-aliased edges of type, recovered by matting

JAPANESE = {
    "title": "屋上",
    "panels": [
        {"index": 1, "caption": "ネオ京都、午前二時。", "sfx": ["ヒュー"]},
        {"index": 2, "dialogue": ["誰だ？（出てこい！）", "どこかで扉がきしむ。"], "sfx": ["ギィ"]},
        {"index": 3, "dialogue": ["俺だよ！"]},
    ],
}


@pytest.fixture
def drawn(account, board, user, client, run):
    """The comic with every panel drawn, its owner signed in."""
    run.finish(run.generate(user, board))
    client.force_login(user)
    return board


def download(client, url: str):
    response = client.get(url)
    body = b"".join(response.streaming_content) if response.status_code == 200 else b""
    return response, body


def psd_of(client, board, page: int = 1, lang: str = "") -> tuple[PSDImage, bytes]:
    query = f"?page={page}" + (f"&lang={lang}" if lang else "")
    response, body = download(client, f"/api/storyboards/{board.pk}/export/psd/{query}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "image/vnd.adobe.photoshop"
    return PSDImage.open(io.BytesIO(body)), body


def lines_of(comic, index: int) -> list[str]:
    """A panel's lettered lines in reading order: its caption, then its dialogue."""
    letterable = comic.arts[index].letterable
    caption = [letterable.caption] if letterable.caption else []
    return caption + [line.text for line in letterable.dialogue]


def parsed(body: bytes) -> psdparse.PSDFile:
    document = psdparse.PSDFile()
    document.load_bytes(body)
    return document


# --- the PSD, read back ------------------------------------------------------------------


def test_a_page_is_a_psd_of_one_group_per_panel_at_the_pages_print_size(drawn, client):
    document, _ = psd_of(client, drawn)
    comic = comic_of(storyboard=drawn)
    page = comic.pages[0]
    assert document.size == page_size()
    resolution = document.image_resources.get_data(Resource.RESOLUTION_INFO)
    assert (resolution.horizontal / 65536, resolution.vertical / 65536) == (150, 150)
    groups = [layer for layer in document if layer.is_group()]
    assert [g.name for g in groups] == [f"Panel {i}" for i in page.panels]
    assert document[0].name == "Paper" and document[-1].name == "Folio"


def test_the_art_layer_is_the_kept_take_as_placed_masked_to_its_cell(drawn, client):
    document, _ = psd_of(client, drawn)
    comic = comic_of(storyboard=drawn)
    page = comic.pages[0]
    boxes = cells(page)
    for group, index in zip([g for g in document if g.is_group()], page.panels, strict=True):
        x0, y0, x1, y1 = boxes[index]
        fitted = fit(comic.arts[index], (x1 - x0, y1 - y0))
        art = group[0]
        assert art.name == "Art" and art.kind == "pixel"
        assert (art.left, art.top) == (x0 + fitted.x, y0 + fitted.y)
        assert art.topil().convert("RGB").tobytes() == fitted.scaled.tobytes()
        assert art.topil().getchannel("A").getextrema() == (255, 255)
        mask = np.asarray(art.mask.topil())
        inside = np.zeros(mask.shape, bool)
        # The cell on the mask (art drawn smaller than its cell lies within it, on paper).
        top, left = max(0, y0 - art.mask.top), max(0, x0 - art.mask.left)
        inside[top : y1 - art.mask.top, left : x1 - art.mask.left] = True
        assert (mask[inside] == 255).all() and (mask[~inside] == 0).all()


def test_each_line_is_an_editable_type_layer_over_a_hidden_raster_copy(drawn, client):
    document, body = psd_of(client, drawn)
    comic = comic_of(storyboard=drawn)
    independent = parsed(body)
    texts = {
        i: dict(layer.text)
        for i, layer in enumerate(independent.layers)
        if layer.layer_type == psdparse.LayerType.TEXT
    }
    for group, index in zip(
        [g for g in document if g.is_group()], comic.pages[0].panels, strict=True
    ):
        typed = [layer for layer in group if layer.kind == "type"]
        assert [layer.text for layer in typed] == lines_of(comic, index)
        for layer in typed:
            below = group[group.index(layer) - 1]
            assert below.kind == "pixel" and not below.visible
            assert below.name.endswith("(raster copy)")
            assert below.bbox == layer.bbox
            assert below.topil().tobytes() == layer.topil().tobytes()
            assert layer.visible and layer.topil().getchannel("A").getextrema()[1] == 255
    read = sorted(t["text"].rstrip("\r") for t in texts.values())
    assert read == sorted(line for i in comic.pages[0].panels for line in lines_of(comic, i))
    for text in texts.values():
        assert text["orientation"] == "horizontal"
        (run,) = text["runs"]
        assert run["font"] == "Kalam-Regular" and run["size_px"] == page_type_size(comic.pages[0])
    shout = next(t for t in texts.values() if t["text"].startswith("Only me"))
    assert shout["runs"][0]["bold"], "a shout's type is bolder"


def test_each_sound_effect_and_balloon_is_a_layer_of_its_own(drawn, client):
    document, _ = psd_of(client, drawn)
    comic = comic_of(storyboard=drawn)
    for group, index in zip(
        [g for g in document if g.is_group()], comic.pages[0].panels, strict=True
    ):
        letterable = comic.arts[index].letterable
        effects = [layer.name for layer in group if layer.name.startswith("Sound effect")]
        assert effects == [f"Sound effect: {e.text}" for e in letterable.sfx]
        names = [layer.name for layer in group]
        for n, line in enumerate(letterable.dialogue, start=1):
            kind = "Balloon" if line.speaker else "Narration"
            assert any(name.startswith(f"{kind} {n}") and line.text[:20] in name for name in names)
        assert names.index("Border") < min(
            i for i, layer in enumerate(group) if layer.kind == "type"
        )


def test_the_layers_together_are_the_page_the_reader_shows(drawn, client):
    document, body = psd_of(client, drawn)
    page = Image.open(io.BytesIO(page_png(client, drawn.pk))).convert("RGB")
    assert document.topil().convert("RGB").tobytes() == page.tobytes(), "the merged image"
    composed = document.composite(ignore_preview=True).convert("RGB")
    assert max_difference(composed, page) <= TOLERANCE
    bgra, _ = parsed(body).composite(background=(255, 255, 255))
    other = Image.frombuffer("RGBA", page.size, bgra, "raw", "BGRA", 0, 1).convert("RGB")
    assert max_difference(other, page) <= TOLERANCE


def max_difference(a: Image.Image, b: Image.Image) -> int:
    return int(np.asarray(ImageChops.difference(a, b)).max())


def test_japanese_is_set_in_vertical_type_layers(drawn, client):
    put = client.put(
        f"/api/storyboards/{drawn.pk}/translations/ja/", JAPANESE, content_type="application/json"
    )
    assert put.status_code == 200, put.content
    document, body = psd_of(client, drawn, lang="ja")
    comic = comic_of(storyboard=drawn, language="ja")
    typed = [layer for layer in document.descendants() if layer.kind == "type"]
    wanted = [line for i in comic.pages[0].panels for line in lines_of(comic, i)]
    assert [layer.text for layer in typed] == wanted
    assert "誰だ？（出てこい！）" in wanted
    for layer in typed:
        assert layer.engine_dict["Rendered"]["Shapes"]["WritingDirection"] == 2
    texts = [
        dict(layer.text)
        for layer in parsed(body).layers
        if layer.layer_type == psdparse.LayerType.TEXT
    ]
    assert {t["orientation"] for t in texts} == {"vertical"}
    assert {t["runs"][0]["font"] for t in texts} == {"NotoSansCJKtc-Regular"}
    effects = [layer.name for layer in document.descendants() if "Sound effect" in layer.name]
    assert effects == ["Sound effect: ヒュー", "Sound effect: ギィ"]
    page = Image.open(io.BytesIO(page_png(client, drawn.pk)))  # the original's page…
    japanese = client.get(
        client.get(f"/api/storyboards/{drawn.pk}/pages/?lang=ja").json()["pages"][0]["image_url"]
    )
    shown = Image.open(io.BytesIO(b"".join(japanese.streaming_content))).convert("RGB")
    assert shown.tobytes() != page.convert("RGB").tobytes()  # …is not the one lettered in ja
    composed = document.composite(ignore_preview=True).convert("RGB")
    assert max_difference(composed, shown) <= TOLERANCE


# --- every page, OpenRaster, refusals ----------------------------------------------------


def test_without_a_page_every_page_comes_in_a_zip(drawn, client):
    response, body = download(client, f"/api/storyboards/{drawn.pk}/export/psd/")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert 'filename="rooftops-psd.zip"' in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(body))
    pages = client.get(f"/api/storyboards/{drawn.pk}/pages/").json()["pages"]
    assert archive.namelist() == [f"page-{n:02d}.psd" for n in range(1, len(pages) + 1)]
    for n, name in enumerate(archive.namelist(), start=1):
        document = PSDImage.open(io.BytesIO(archive.read(name)))
        assert document.size == page_size()
        reader = Image.open(io.BytesIO(page_png(client, drawn.pk, n))).convert("RGB")
        assert document.topil().convert("RGB").tobytes() == reader.tobytes()


def test_openraster_holds_the_same_layers(drawn, client):
    response, body = download(client, f"/api/storyboards/{drawn.pk}/export/ora/?page=1")
    assert response.status_code == 200 and response["Content-Type"] == "image/openraster"
    archive = zipfile.ZipFile(io.BytesIO(body))
    first = archive.infolist()[0]
    assert (first.filename, first.compress_type) == ("mimetype", zipfile.ZIP_STORED)
    assert archive.read("mimetype") == b"image/openraster"
    root = ET.fromstring(archive.read("stack.xml"))
    assert (int(root.get("w")), int(root.get("h"))) == page_size()
    comic = comic_of(storyboard=drawn)
    panels = [s.get("name") for s in root.find("stack").findall("stack")]
    assert panels == [f"Panel {i}" for i in reversed(comic.pages[0].panels)]  # top first
    page = Image.open(io.BytesIO(page_png(client, drawn.pk))).convert("RGB")
    assert max_difference(ora_composite(archive, root), page) <= TOLERANCE
    assert not any(layer.get("visibility") == "hidden" for layer in root.iter("layer"))


def ora_composite(archive: zipfile.ZipFile, root: ET.Element) -> Image.Image:
    """The OpenRaster's layers put together as its specification says: bottom to top."""
    canvas = Image.new("RGBA", (int(root.get("w")), int(root.get("h"))), "white")
    for layer in reversed(list(root.iter("layer"))):
        picture = Image.open(io.BytesIO(archive.read(layer.get("src")))).convert("RGBA")
        canvas.alpha_composite(picture, (int(layer.get("x")), int(layer.get("y"))))
    return canvas.convert("RGB")


def test_refusals(account, board, user, client, run, make_user, settings):
    client.force_login(user)
    base = f"/api/storyboards/{board.pk}/export/psd/"
    answer = client.get(f"{base}?page=1")
    assert (answer.status_code, answer.json()["error"]) == (409, "nothing_to_export")
    run.finish(run.generate(user, board))
    for page in ("0", "99", "x", "1.5", "-1", "٣", "9" * 5000):
        answer = client.get(base, {"page": page})
        assert (answer.status_code, answer.json()["error"]) == (400, "invalid"), page
    answer = client.get(f"{base}?page=1&lang=de")
    assert (answer.status_code, answer.json()["error"]) == (404, "no_such_translation")
    settings.LAYERED_EXPORT_MAX_BYTES = 1000
    answer = client.get(base)
    assert (answer.status_code, answer.json()["error"]) == (409, "export_too_large")
    assert client.get(f"{base}?page=1").status_code == 200, "a page at a time still"
    client.force_login(make_user("stranger"))
    assert client.get(f"{base}?page=1").status_code == 404
    assert client.get(f"/api/storyboards/{board.pk}/export/ora/").status_code == 404


def test_building_meets_the_drawing_budget(account, board, user, client, run, settings):
    run.finish(run.generate(user, board))
    client.force_login(user)
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.001
    # Setting the page's layers apart spends far more than the budget: the page's own
    # picture, built next (a build of its own), is refused.
    refused = client.get(f"/api/storyboards/{board.pk}/export/psd/?page=1")
    assert refused.status_code == 429 and refused.json()["error"] == "drawing_budget"
    assert int(refused["Retry-After"]) >= 1


# --- opened in another program -----------------------------------------------------------

GIMP = shutil.which("gimp-console-2.10") or shutil.which("gimp-console")
FLATTEN = """
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "{source}" "{source}")))
       (layer (car (gimp-image-flatten image))))
  (gimp-file-save RUN-NONINTERACTIVE image layer "{target}" "{target}")
  (gimp-image-delete image))
"""


def flattened_by_gimp(psd: bytes, folder) -> Image.Image:
    """GIMP, headless, loads the PSD, flattens its visible layers onto white, saves a PNG."""
    source, target = folder / "page.psd", folder / "flat.png"
    source.write_bytes(psd)
    script = FLATTEN.format(source=source, target=target)
    done = subprocess.run(
        [GIMP, "-i", "-d", "-f", "-b", script, "-b", "(gimp-quit 0)"],
        env={**os.environ, "HOME": str(folder)},  # GIMP's settings: in the test's folder
        capture_output=True,
        timeout=240,
    )
    assert target.exists(), done.stderr.decode(errors="replace")
    return Image.open(target).convert("RGB")


@pytest.mark.skipif(GIMP is None, reason="GIMP is not installed (apt-get install gimp)")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("lang", ["", "ja"])
def test_gimp_flattens_the_psd_to_the_page_the_reader_shows(drawn, client, tmp_path, lang):
    """GIMP reads the layers, not the merged image (checked by hand: a file whose merged
    image is red flattens to the same page), and type layers as their stored pixels."""
    if lang:
        put = client.put(
            f"/api/storyboards/{drawn.pk}/translations/ja/",
            JAPANESE,
            content_type="application/json",
        )
        assert put.status_code == 200, put.content
    query = f"?lang={lang}" if lang else ""
    pages = client.get(f"/api/storyboards/{drawn.pk}/pages/{query}").json()["pages"]
    shown = client.get(pages[0]["image_url"])
    page = Image.open(io.BytesIO(b"".join(shown.streaming_content))).convert("RGB")
    response, psd = download(
        client,
        f"/api/storyboards/{drawn.pk}/export/psd/?page=1" + (f"&lang={lang}" if lang else ""),
    )
    assert response.status_code == 200
    flat = flattened_by_gimp(psd, tmp_path)
    assert flat.size == page.size
    assert max_difference(flat, page) <= TOLERANCE
