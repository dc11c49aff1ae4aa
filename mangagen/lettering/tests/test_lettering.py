"""The lettering layer: balloons over the art, fitted, placed off faces, in reading order."""

import io

import pytest
from PIL import Image, ImageDraw

from mangagen.lettering import Letterable, languages, letter, lettering_font, placement
from mangagen.lettering.fonts import cjk_font, covers, face_for
from mangagen.lettering.text import wrap
from mangagen.pages.compose import PanelArt, compose_page, compose_strip
from mangagen.pages.layout import LayoutPanel, paginate


def blank(width=600, height=420) -> Image.Image:
    return Image.new("RGB", (width, height), "white")


def ink_in(image: Image.Image, box) -> int:
    """How many dark pixels fall in `box`."""
    return sum(image.convert("L").crop(box).histogram()[:128])


def test_the_shipped_fonts_are_a_lettering_face_and_a_japanese_one():
    assert "Kalam" in lettering_font(20).getname()[0]
    assert "Noto Sans CJK" in cjk_font(20).getname()[0]
    assert cjk_font(20).getbbox("待") != cjk_font(20).getbbox("?")  # a real kanji glyph


def test_no_text_leaves_the_art_untouched():
    art = blank()
    assert letter(art, panel=Letterable()).tobytes() == art.convert("RGB").tobytes()


def test_balloons_stay_off_the_faces_and_the_tail_points_at_the_speaker():
    panel = Letterable.of(
        dialogue=[{"speaker": "Aiko", "text": "They're right behind us, run!"}],
        caption="",
        shot="medium",
        characters=["Aiko"],
        faces={"Aiko": [0.5, 0.6, 0.15]},
    )
    lettered = letter(blank(), panel=panel)
    face = (300 - 63, 252 - 63, 300 + 63, 252 + 63)
    assert ink_in(lettered, face) == 0, "no balloon covers the face"
    assert ink_in(lettered, (0, 0, 600, 180)) > 200, "the balloon sits above"
    # the tail reaches down toward the face, between balloon and head
    assert ink_in(lettered, (240, 150, 360, 189)) > 0


def test_several_balloons_in_reading_order_right_to_left():
    panel = Letterable.of(
        dialogue=[{"speaker": "", "text": "First."}, {"speaker": "", "text": "Second."}],
        caption="",
        shot="wide",
        characters=[],
        faces={},
    )
    lettered = letter(blank(), panel=panel, direction="rtl")
    right = ink_in(lettered, (300, 0, 600, 420))
    assert right > 0
    # with nothing in the way, the first sits right of (or above) the second: drawn alone,
    # "First." lands on the right half
    alone = letter(
        blank(),
        panel=Letterable.of(
            dialogue=[{"speaker": "", "text": "First."}],
            caption="",
            shot="wide",
            characters=[],
            faces={},
        ),
        direction="rtl",
    )
    assert ink_in(alone, (300, 0, 600, 420)) > ink_in(alone, (0, 0, 300, 420))


def test_long_text_is_fitted_inside_the_panel():
    text = "A sentence that is far too long for one balloon and keeps on going. " * 4
    panel = Letterable.of(
        dialogue=[{"speaker": "", "text": text}], caption="", shot="wide", characters=[], faces={}
    )
    lettered = letter(blank(400, 280), panel=panel)
    assert lettered.size == (400, 280)
    assert ink_in(lettered, (0, 0, 400, 280)) > 0


def test_words_wrap_inside_the_width():
    draw = ImageDraw.Draw(Image.new("L", (10, 10)))
    f = lettering_font(16)
    lines = wrap(draw, "A sentence that is far too long for one line " * 3 + "x" * 80, f, 150)
    assert len(lines) > 3
    assert all(draw.textlength(line, font=f) <= 150 + f.size for line in lines)


def inked_box(image: Image.Image):
    return Image.eval(image.convert("L"), lambda v: 255 if v < 128 else 0).getbbox()


@pytest.mark.parametrize(
    "language, text, tall",
    [
        ("ja", "待って！行かないで", True),  # Japanese: a column
        ("zh-hant", "等等！不要走", False),  # the same script in Chinese: a line
        ("en", "待って！行かないで", False),  # Japanese words in an English comic: a line
        ("ja", "OK!", False),  # Latin letters in a Japanese comic stay horizontal
    ],
)
def test_the_language_decides_whether_a_line_is_set_vertically(language, text, tall):
    panel = Letterable.of(
        dialogue=[{"speaker": "", "text": text}],
        caption="",
        shot="medium",
        characters=[],
        faces={},
        language=language,
    )
    bbox = inked_box(letter(blank(), panel=panel))
    assert bbox is not None
    assert ((bbox[3] - bbox[1]) > (bbox[2] - bbox[0])) == tall


# Letters of each language beyond those of its own name.
ALPHABETS = {
    "ru": "абвгдеёжзийклмнопрстуфхцчшщъыьэюяЁЙЩЪЫЭЮЯ",
    "bg": "абвгдежзийклмнопрстуфхцчшщъьюя",
    "vi": "ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđĐƠơƯư",
    "pl": "ąćęłńóśźżĄĆĘŁŃÓŚŹŻ",
    "cs": "áčďéěíňóřšťúůýž",
    "sk": "áäčďéíĺľňóôŕšťúýž",
    "ro": "ăâîșțĂÂÎȘȚşţ",
    "tr": "çğışöüİĞŞ",
    "hu": "áéíóöőúüű",
    "lv": "āčēģīķļņšūž",
    "lt": "ąčęėįšųūž",
    "et": "õäöüšž",
    "hr": "čćđšž",
    "ca": "àçèéíïòóúü·",
    "fr": "àâæçéèêëîïôœùûüÿ«»",
    "de": "äöüß„“",
    "es": "áéíñóúü¿¡",
    "pt": "ãõáâàçéêíóôú",
    "da": "æøåÆØÅ",
    "sv": "åäöÅÄÖ",
    "ko": "다람쥐 헌 쳇바퀴에 타고파",
    "ja": "いろはにほへと カタカナ 漢字「」、。ー…",
    "zh-hans": "我能吞下玻璃而不伤身体",
    "zh-hant": "我能吞下玻璃而不傷身體",
}


@pytest.mark.parametrize("code", languages.CODES)
def test_every_language_offered_can_be_lettered_without_a_missing_glyph(code):
    """Each language's own name ("Русский", "한국어", "Tiếng Việt") and its letters are
    drawn in one of the shipped faces, never as empty boxes."""
    text = languages.local_name(code) + ALPHABETS.get(code, "")
    face = face_for(text, 24)
    assert covers(face, text), (code, text, face.getname())


def test_a_line_kalam_cannot_draw_is_lettered_in_noto():
    assert "Kalam" in face_for("Who's there?", 20).getname()[0]
    assert "Noto Sans CJK" in face_for("Кто там?", 20).getname()[0]
    assert "Noto Sans CJK" in face_for("누구세요?", 20).getname()[0]


def test_unspaced_text_breaks_between_characters_never_before_a_closing_mark():
    draw = ImageDraw.Draw(Image.new("L", (10, 10)))
    f = cjk_font(16)
    text = "今夜は月がきれいですね。「待って」と彼女は言った。"
    lines = wrap(draw, text, f, 70)
    assert len(lines) > 3 and "".join(lines) == text  # no hyphen, nothing lost
    assert all(draw.textlength(line, font=f) <= 70 + f.size for line in lines)
    assert not any(line[0] in "。」、" for line in lines)
    assert not any(line[-1] == "「" for line in lines)


def test_a_translation_longer_than_its_original_is_set_whole(monkeypatch):
    """The balloon grows, or the type shrinks within bounds: a German line twice the
    English one is never cut short."""
    cut = []
    block = placement._Letterer._block

    def watch(self, text, size, vertical, kind, force=False):
        cut.extend([text] if force else [])
        return block(self, text, size, vertical, kind, force)

    monkeypatch.setattr(placement._Letterer, "_block", watch)
    for language, text in (
        ("en", "They're right behind us, run!"),
        ("de", "Sie sind direkt hinter uns, lauf so schnell du kannst, Aiko, lauf!"),
    ):
        panel = Letterable.of(
            dialogue=[{"speaker": "Aiko", "text": text}, {"speaker": "Kenji", "text": text}],
            caption="Neo-Kyoto, zwei Uhr nachts.",
            shot="medium",
            characters=["Aiko", "Kenji"],
            faces=None,
            language=language,
        )
        letter(blank(768, 544), panel=panel)
    assert cut == []


def test_text_stored_with_line_breaks_is_lettered_on_one_line():
    """Pillow's layout refuses a line break in what it measures: text saved
    before the API kept lettered text on one line must still draw."""
    panel = Letterable.of(
        dialogue=[{"speaker": "Aiko", "text": "Who's there?\nShow\r\nyourself.\x1c"}],
        caption="Night\u2029falls.",
        shot="medium",
        characters=["Aiko"],
        faces=None,
    )
    assert [(d.speaker, d.text) for d in panel.dialogue] == [
        ("Aiko", "Who's there? Show yourself.")
    ]
    assert panel.caption == "Night falls."
    art = io.BytesIO()
    blank().save(art, "PNG")
    arts = {1: PanelArt(1, panel, art.getvalue)}
    (page,) = paginate([LayoutPanel(1, "medium")])
    title = "A title\rwith a break"
    assert compose_page(page, arts=arts, direction="rtl", title=title, dpi=72).size[0] > 0
    assert compose_strip([arts[1]], direction="rtl", title=title).size[0] > 0
