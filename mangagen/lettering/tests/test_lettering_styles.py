"""Balloon styles, balloons placed by the person, and sound effects, checked from the pixels.

Each style is drawn alone, centred where the person put it on a blank panel, in
both writing directions; its outline is then read back along rays from the
balloon's centre: a burst's reach jumps from spike to valley, a cloud's rim is
a row of small arcs and a trail of separate bubbles, a whisper's outline has
gaps and its type is grey, a plain balloon's rim is smooth and whole.
"""

import math
import statistics
from dataclasses import dataclass

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFilter

from mangagen.lettering import Letterable, letter

W, H = 640, 480
CENTRE = (0.5, 0.42)
TEXT = {"en": "Get down, now! They're coming!", "ja": "伏せろ！奴らが来る！"}


def blank() -> Image.Image:
    return Image.new("RGB", (W, H), "white")


def drawn(style: str, language: str, *, tail=None, text=None, place=CENTRE, sfx=()):
    line = {"speaker": "Aiko", "text": text or TEXT[language], "style": style}
    if place is not None:
        line["place"] = {"x": place[0], "y": place[1]}
        if tail:
            line["place"]["tail"] = {"x": tail[0], "y": tail[1]}
    panel = Letterable.of(
        dialogue=[line],
        caption="",
        shot="wide",
        characters=["Aiko"],
        # the speaker's face under the balloon: no tail, unless one is aimed elsewhere
        faces={"Aiko": [*(place or CENTRE), 0.01]},
        language=language,
        sfx=list(sfx),
    )
    return letter(blank(), panel=panel).convert("L")


def dark(image, x, y, level=128) -> bool:
    return 0 <= x < W and 0 <= y < H and image.getpixel((x, y)) < level


def rim(image, rays=360) -> list[float]:
    """The distance from the balloon's centre to its outermost ink, along each ray."""
    cx, cy = CENTRE[0] * W, CENTRE[1] * H
    reach = []
    for k in range(rays):
        a = 2 * math.pi * k / rays
        far = 0.0
        for step in range(2, 400):
            x, y = round(cx + math.cos(a) * step), round(cy + math.sin(a) * step)
            if not (0 <= x < W and 0 <= y < H):
                break
            if dark(image, x, y):
                far = step
        reach.append(far)
    return reach


def gaps(reach: list[float], window: int = 12) -> float:
    """The share of rays that find no rim where their neighbours do (a dashed outline)."""
    n = len(reach)
    around = [
        statistics.median(reach[(i + d) % n] for d in range(-window, window + 1)) for i in range(n)
    ]
    return sum(r < 0.85 * m for r, m in zip(reach, around, strict=True)) / n


@dataclass
class Shape:
    solidity: float  # the balloon's area over its convex hull's: 1 for an oval
    notches: int  # dents in its rim (3 pixels or more): between a cloud's puffs
    deep: int  # deep ones (10 pixels or more): between a burst's spikes


def shape(image) -> Shape:
    """The balloon as a silhouette (all that the paper around it cannot reach), measured
    against its convex hull, at half size."""
    small = image.filter(ImageFilter.MinFilter(3)).resize((W // 2, H // 2), Image.NEAREST)
    w, h = small.size
    framed = Image.new("L", (w + 2, h + 2), 255)
    framed.paste(small.point(lambda v: 255 if v >= 128 else 0), (1, 1))
    ImageDraw.floodfill(framed, (0, 0), 128)  # the paper outside the balloon
    outside = framed.point(lambda v: 255 if v == 128 else 0)
    silhouette = framed.point(lambda v: 0 if v == 128 else 255)
    rows = {}
    for y in range(h + 2):
        box = silhouette.crop((0, y, w + 2, y + 1)).getbbox()
        if box:
            rows[y] = (box[0], box[2])
    points = sorted(
        {p for y, (a, b) in rows.items() for p in ((a, y), (b - 1, y))}  # inclusive, as drawn
    )
    hull = _hull(points)
    mask = Image.new("L", framed.size, 0)
    ImageDraw.Draw(mask).polygon(hull, fill=255)
    dents = ImageChops.multiply(mask, outside)
    area = sum(silhouette.histogram()[255:])
    hull_area = sum(mask.histogram()[255:])
    sizes = components(dents, dents.getbbox(), 1)
    return Shape(area / hull_area, sum(c >= 3 for c in sizes), sum(c >= 10 for c in sizes))


def _hull(points):
    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in points:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(points):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def components(image, box, level=160, ordered="") -> list[int]:
    """The sizes of the separate patches of ink inside `box` (4-connected); with a
    `level` of 1, of any pixel not black; `ordered` "top" or "left": from the patch that
    starts highest down, or leftmost rightward."""
    if box is None:
        return []
    x0, y0, x1, y1 = box
    w, h = image.size

    def dark(im, x, y, lv):
        v = im.getpixel((x, y)) if 0 <= x < w and 0 <= y < h else 255
        return v >= lv if lv == 1 else v < lv

    seen, sizes, starts = set(), [], []
    for y in range(y0, y1):
        for x in range(x0, x1):
            if (x, y) in seen or not dark(image, x, y, level):
                continue
            stack, size, top, left = [(x, y)], 0, y, x
            seen.add((x, y))
            while stack:
                px, py = stack.pop()
                size += 1
                left = min(left, px)
                for q in ((px + 1, py), (px - 1, py), (px, py + 1), (px, py - 1)):
                    if (
                        x0 <= q[0] < x1
                        and y0 <= q[1] < y1
                        and q not in seen
                        and dark(image, *q, level)
                    ):
                        seen.add(q)
                        stack.append(q)
            sizes.append(size)
            starts.append(top if ordered == "top" else left)
    return [size for _, size in sorted(zip(starts, sizes, strict=True))] if ordered else sizes


def ink_box(image, level=128):
    return image.point(lambda v: 255 if v < level else 0).getbbox()


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_speech_balloon_is_a_smooth_whole_oval(language):
    image = drawn("speech", language)
    oval = shape(image)
    assert oval.solidity > 0.97 and oval.deep == 0
    assert gaps(rim(image)) == 0


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_shout_is_a_spiky_burst_with_bolder_type(language):
    burst = shape(drawn("shout", language))
    assert burst.solidity < 0.93, "spikes, deeply cut between"
    assert burst.deep >= 8
    # bolder type: more ink in the text than a plain balloon's, the same words
    inner = (W // 2 - 60, round(H * 0.42) - 30, W // 2 + 60, round(H * 0.42) + 30)
    shout, speech = drawn("shout", language).crop(inner), drawn("speech", language).crop(inner)
    assert sum(shout.histogram()[:128]) > 1.15 * sum(speech.histogram()[:128])


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_whisper_has_a_dashed_outline_and_lighter_smaller_type(language):
    whisper, speech = drawn("whisper", language), drawn("speech", language)
    assert 0.15 < gaps(rim(whisper)) < 0.7
    assert shape(whisper).solidity < 0.6, "the paper reaches in between the dashes"
    # lighter type: nothing inside is solid black; smaller: a smaller balloon
    x0, y0, x1, y1 = ink_box(whisper, level=200)
    w, h = x1 - x0, y1 - y0
    middle = (x0 + w // 4, y0 + h // 4, x1 - w // 4, y1 - h // 4)
    assert whisper.crop(middle).getextrema()[0] > 60
    assert speech.crop(middle).getextrema()[0] < 30
    sx0, sy0, sx1, sy1 = ink_box(speech, level=200)
    assert w * h < (sx1 - sx0) * (sy1 - sy0)


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_thought_is_a_cloud_with_a_trail_of_shrinking_bubbles(language):
    image = drawn("thought", language)
    cloud = shape(image)
    oval = shape(drawn("speech", language))
    assert cloud.notches >= 12 and cloud.notches >= 3 * oval.notches, "a rim of puffs"
    assert cloud.solidity > 0.95 and cloud.deep <= 2, "shallow dents, not a burst's spikes"
    assert gaps(rim(image)) == 0, "a whole rim"
    # the trail: separate bubbles between the cloud and the point, shrinking toward it
    # below a wide cloud; to the right of a tall one
    _, _, x1, y1 = ink_box(image)
    if language == "en":
        trailed = drawn("thought", language, tail=(0.5, 0.97))
        bubbles = components(trailed, (0, y1 + 2, W, H), ordered="top")  # rings, from the cloud
    else:
        trailed = drawn("thought", language, tail=(0.97, 0.42))
        bubbles = components(trailed, (x1 + 2, 0, W, H), ordered="left")
    assert len(bubbles) == 3, bubbles
    assert bubbles[0] > bubbles[1] > bubbles[2], "each smaller than the one before"


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_speech_tail_reaches_the_point_the_person_set(language):
    tail = (0.85, 0.9)
    image = drawn("speech", language, tail=tail)
    tx, ty = round(tail[0] * W), round(tail[1] * H)
    near = image.crop((tx - 8, ty - 8, tx + 8, ty + 8))
    assert near.getextrema()[0] < 128, "the tail's tip is where it was put"


def test_japanese_is_set_in_columns_and_english_in_rows():
    ja, en = drawn("speech", "ja"), drawn("speech", "en")
    x0, y0, x1, y1 = ink_box(ja)
    assert y1 - y0 > x1 - x0  # a tall balloon of columns
    x0, y0, x1, y1 = ink_box(en)
    assert x1 - x0 > y1 - y0


@pytest.mark.parametrize("place", [(0.3, 0.3), (0.7, 0.6)])
def test_a_placed_balloon_grows_around_its_centre_as_its_text_grows(place):
    short = ink_box(drawn("speech", "en", text="Hey.", place=place))
    long = ink_box(drawn("speech", "en", text="Hey. " + "Listen to me, this is long. " * 4))
    long = ink_box(
        drawn("speech", "en", text="Hey. " + "Listen to me, this is long. " * 4, place=place)
    )
    for box in (short, long):
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        assert abs(cx - place[0] * W) < 4 and abs(cy - place[1] * H) < 4
    assert (long[2] - long[0]) * (long[3] - long[1]) > 4 * (short[2] - short[0]) * (
        short[3] - short[1]
    )


@pytest.mark.parametrize("style", ["speech", "thought", "shout", "whisper"])
def test_a_balloon_placed_at_the_edge_stays_inside_the_panel(style):
    text = "A line that is long enough to need a big balloon, growing and growing. " * 3
    for place in [(0.0, 0.0), (1.0, 1.0), (0.98, 0.02)]:
        x0, y0, x1, y1 = ink_box(drawn(style, "en", text=text, place=place), level=200)
        assert x0 > 0 and y0 > 0 and x1 < W and y1 < H, (place, (x0, y0, x1, y1))


def test_sound_effects_are_large_outlined_art_text_vertical_in_japanese():
    boom = {"text": "BOOM", "x": 0.7, "y": 0.75, "size": 0.2}
    en = drawn("speech", "en", place=(0.3, 0.2), sfx=[boom])
    area = (round(0.45 * W), round(0.55 * H), W, H)
    x0, y0, x1, y1 = ink_box(en.crop(area))
    assert x1 - x0 > y1 - y0 > 0.12 * H  # large, in a row
    rgb = letter(
        Image.new("RGB", (W, H), (120, 120, 120)),
        panel=Letterable.of(
            dialogue=[], caption="", shot="wide", characters=[], faces=None, sfx=[boom]
        ),
    ).convert("L")
    assert rgb.crop(area).getextrema()[1] > 240, "outlined in white over the art"
    don = {"text": "ドドド", "x": 0.7, "y": 0.5, "size": 0.15}
    ja = drawn("speech", "ja", place=(0.2, 0.3), sfx=[don])
    x0, y0, x1, y1 = ink_box(ja.crop((round(0.5 * W), 0, W, H)))
    assert y1 - y0 > 2 * (x1 - x0)  # a column
    turned = drawn("speech", "en", place=(0.3, 0.2), sfx=[boom | {"angle": 30}])
    assert ink_box(turned.crop(area)) != ink_box(en.crop(area))


def test_automatic_balloons_keep_off_one_the_person_placed():
    placed = {"speaker": "", "text": "Placed here.", "place": {"x": 0.8, "y": 0.15}}
    later = {"speaker": "", "text": "And me wherever the lettering likes."}

    def lettered(*lines):
        panel = Letterable.of(
            dialogue=list(lines), caption="", shot="wide", characters=[], faces=None
        )
        return letter(blank(), panel=panel).convert("L")

    image, alone = lettered(placed, later), lettered(placed)
    bx0, by0, bx1, by1 = ink_box(alone)
    # the other is drawn too, and not over the placed one
    assert sum(image.histogram()[:128]) > 1.5 * sum(alone.histogram()[:128])
    assert image.crop((bx0, by0, bx1, by1)).tobytes() == alone.crop((bx0, by0, bx1, by1)).tobytes()
