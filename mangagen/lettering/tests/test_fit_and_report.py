"""Lettering that fits its panel, and says where it went: a sound effect at the panel's
edge or too long for it is moved in and made smaller (and says so), a balloon put past
the edge is moved in (and says so), and every balloon the lettering places itself is
reported where its ink is, with where its tail ends."""

import pytest
from PIL import Image, ImageChops

from mangagen.lettering import Letterable, letter

W, H = 544, 384
FORTY = "DOKI DOKI DOKI DOKI DOKI DOKI DOKI DOKI"  # 39 characters
assert len(FORTY + "!") == 40


def panel(*, dialogue=(), sfx=(), language="en", faces=None):
    return Letterable.of(
        dialogue=list(dialogue),
        caption="",
        shot="medium",
        characters=["Aiko"],
        faces=faces if faces is not None else {"Aiko": [0.5, 0.7, 0.08]},
        language=language,
        sfx=list(sfx),
    )


def inked(before: Image.Image, after: Image.Image):
    """The bounding box of what lettering changed, or None."""
    return ImageChops.difference(before.convert("L"), after.convert("L")).getbbox()


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("x", [0.97, 0.03, 0.5])
def test_a_forty_character_sound_effect_stays_inside_and_says_so(x, language):
    art = Image.new("RGB", (W, H), "white")
    report = []
    effect = {"text": FORTY + "!", "x": x, "y": 0.5, "size": 0.2, "angle": 10}
    out = letter(art, panel=panel(sfx=[effect], language=language), report=report)
    (placed,) = report
    x0, y0, x1, y1 = placed.box
    assert x0 >= 0 and x1 <= W and y0 >= 0 and y1 <= H
    box = inked(art, out)
    assert box is not None
    # Ink inside the panel, short of its edges (its margin), none of it cut off.
    assert box[0] > 0 and box[1] > 0 and box[2] < W and box[3] < H
    assert placed.shrunk  # 40 letters at a fifth of the panel cannot fit as asked
    assert placed.moved_in == (x != 0.5)
    assert placed.number == 0


def test_a_short_sound_effect_in_the_middle_is_neither_moved_nor_shrunk():
    report = []
    letter(
        Image.new("RGB", (W, H), "white"),
        panel=panel(sfx=[{"text": "BAM", "x": 0.5, "y": 0.5}]),
        report=report,
    )
    assert (report[0].moved_in, report[0].shrunk) == (False, False)


def test_a_balloon_put_past_the_edge_is_moved_in_and_says_so():
    report = []
    line = {"speaker": "Aiko", "text": "Over here!", "place": {"x": 1.0, "y": 0.0}}
    letter(Image.new("RGB", (W, H), "white"), panel=panel(dialogue=[line]), report=report)
    (placed,) = report
    assert placed.moved_in and not placed.auto
    assert placed.box[2] <= W and placed.box[1] >= 0


def test_each_balloon_the_lettering_places_is_reported_on_its_ink_with_its_tail():
    lines = [
        {"speaker": "Aiko", "text": "They're right behind us!"},
        {"speaker": "", "text": ""},  # an empty line: not lettered, still counted
        {"speaker": "Aiko", "text": "Run!", "style": "shout"},
    ]
    art = Image.new("RGB", (W, H), "white")
    report = []
    out = letter(art, panel=panel(dialogue=lines), report=report)
    assert [(p.kind, p.number, p.auto) for p in report] == [
        ("balloon", 0, True),
        ("balloon", 2, True),
    ]
    face = (0.5 * W, 0.7 * H)
    for placed in report:
        x0, y0, x1, y1 = placed.box
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        crop = tuple(map(round, placed.box))
        assert inked(art.crop(crop), out.crop(crop))  # the balloon is drawn in its box
        tail = placed.tail
        assert tail is not None  # it aims at Aiko's face
        assert not (x0 < tail[0] < x1 and y0 < tail[1] < y1)  # past its oval
        assert distance(tail, face) < distance(centre, face)
        near = out.convert("L").crop(
            (round(tail[0]) - 2, round(tail[1]) - 2, round(tail[0]) + 3, round(tail[1]) + 3)
        )
        assert near.getextrema()[0] < 128  # ink: the tail's tip is drawn there
    fractions = report[0].as_fractions(W, H)
    assert 0 <= fractions["box"]["x0"] < fractions["centre"]["x"] < fractions["box"]["x1"] <= 1
    assert fractions["auto"] is True and fractions["tail"]["y"] > fractions["box"]["y1"] - 0.01


def distance(a, b) -> float:
    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5
