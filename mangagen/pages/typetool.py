"""Photoshop's type tool block (`TySh`): what makes a layer of a PSD an editable type layer.

No library on PyPI writes one (psd-tools reads it; psdparse edits one that exists;
pytoshop has none), so this module writes it from Adobe's "Photoshop File Formats
Specification" ("Type tool object setting", "Descriptor structure") and the text engine's
own format (EngineData: a PostScript-like dictionary, its strings UTF-16 with a byte order
mark). The rest of the file (layers, groups, masks, pixels) is psd-tools' (pages/psd.py).

A type layer keeps its pixels too: Photoshop shows what the layer stores until the text is
edited, so the lettering opens exactly as on the page; then Photoshop sets the text again
with its own engine, in the font named here if it is installed. The text is area
("paragraph") type in a box around the lettering's block, so the whole line is the layer's
text (the lettering's own line breaks come back as the box wraps it), centred in a balloon,
from the left in a box; Japanese in vertical columns, right to left.

Sizes are in the document's pixels: the type's size, its leading, the box, and the
transform (identity scale, translated to the box's corner), as Photoshop writes them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

LEADING = 1.12  # of the type's size, as the lettering sets lines (lettering/text.py)
COLUMN_WIDTH = 1.25  # a vertical column's width, of the type's size
COLUMN_STEP = 1.08  # a character's height in a column, of the type's size


@dataclass(frozen=True)
class TypeText:
    """The text of one type layer: what it says, its font's PostScript name and size (in
    pixels), its box on the canvas (x0, y0, x1, y1), whether it is set in vertical
    columns, centred, bolder, and its colour."""

    text: str
    font: str
    size: float
    box: tuple[float, float, float, float]
    vertical: bool = False
    centred: bool = True
    bold: bool = False
    color: tuple[int, int, int] = (0, 0, 0)


def type_tool_block(text: TypeText, *, index: int = 0) -> bytes:
    """The `TySh` tagged block's data for `text` (the `index`th type layer of the file),
    padded to a multiple of four bytes as Photoshop writes it."""
    x0, y0, x1, y1 = text.box
    width, height = x1 - x0, y1 - y0
    bounds = [("Left", 0.0), ("Top ", 0.0), ("Rght", width), ("Btom", height)]
    body = [
        ("Txt ", "TEXT", _unicode(text.text.replace("\n", "\r") + "\x00")),
        ("textGridding", "enum", _enum("textGridding", "None")),
        ("Ornt", "enum", _enum("Ornt", "Vrtc" if text.vertical else "Hrzn")),
        ("AntA", "enum", _enum("Annt", "AnSm")),
        ("bounds", "Objc", _descriptor("bounds", _points(bounds))),
        ("boundingBox", "Objc", _descriptor("boundingBox", _points(bounds))),
        ("TextIndex", "long", struct.pack(">i", index)),
        ("EngineData", "tdta", _raw(engine_data(text))),
    ]
    warp = [
        ("warpStyle", "enum", _enum("warpStyle", "warpNone")),
        ("warpValue", "doub", struct.pack(">d", 0.0)),
        ("warpPerspective", "doub", struct.pack(">d", 0.0)),
        ("warpPerspectiveOther", "doub", struct.pack(">d", 0.0)),
        ("warpRotate", "enum", _enum("Ornt", "Hrzn")),
    ]
    data = b"".join(
        [
            struct.pack(">H", 1),  # type tool version
            struct.pack(">6d", 1.0, 0.0, 0.0, 1.0, float(x0), float(y0)),  # xx xy yx yy tx ty
            struct.pack(">H", 50),  # text version
            struct.pack(">I", 16),  # descriptor version
            _descriptor("TxLr", body),
            struct.pack(">H", 1),  # warp version
            struct.pack(">I", 16),  # descriptor version
            _descriptor("warp", warp),
            struct.pack(">4i", 0, 0, 0, 0),  # left, top, right, bottom: Photoshop writes zeros
        ]
    )
    return data + b"\x00" * (-len(data) % 4)


# --- descriptors (the specification's "Descriptor structure") -------------------------------


def _unicode(value: str) -> bytes:
    """A Unicode string: its length in UTF-16 code units, then the units, big-endian."""
    encoded = value.encode("utf-16-be")
    return struct.pack(">I", len(encoded) // 2) + encoded


def _id(value: str) -> bytes:
    """A key or class ID: four characters as 0 then the four bytes, any other length first."""
    raw = value.encode("ascii")
    return struct.pack(">I", 0 if len(raw) == 4 else len(raw)) + raw


def _enum(type_id: str, value: str) -> bytes:
    return _id(type_id) + _id(value)


def _raw(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _points(items: list[tuple[str, float]]) -> list[tuple[str, str, bytes]]:
    return [(key, "UntF", b"#Pnt" + struct.pack(">d", float(value))) for key, value in items]


def _descriptor(class_id: str, items: list[tuple[str, str, bytes]]) -> bytes:
    """A descriptor: its (empty) name, its class ID, then each item's key, type and value."""
    head = _unicode("\x00") + _id(class_id) + struct.pack(">I", len(items))
    return head + b"".join(_id(key) + kind.encode("ascii") + value for key, kind, value in items)


# --- EngineData ------------------------------------------------------------------------------


class Float(float):
    """A number the text engine reads as a real: always written with a point (`24.0`)."""


def engine_data(text: TypeText) -> bytes:
    """The text engine's data for `text`: the text, one paragraph and one style run over all
    of it, the font, and the box it is set in."""
    content = text.text.replace("\n", "\r") + "\r"  # the engine ends a text with a return
    paragraph, style = _paragraph(text), _style(text)
    fonts = [_font("AdobeInvisFont"), _font(text.font)]
    resources = _resources(paragraph=paragraph, style=style, fonts=fonts)
    document = _document(text, content=content, paragraph=paragraph, style=style)
    document["ResourceDict"] = resources
    document["DocumentResources"] = resources
    return b"\n\n" + _value(document, 0) + b"\n"


def _paragraph(text: TypeText) -> dict:
    """The one paragraph's properties: centred in a balloon, or set from the left (the
    top, in a column)."""
    return {
        "Justification": 2 if text.centred else 0,  # centre, or left (top in a column)
        "FirstLineIndent": Float(0),
        "StartIndent": Float(0),
        "EndIndent": Float(0),
        "SpaceBefore": Float(0),
        "SpaceAfter": Float(0),
        "AutoHyphenate": False,
        "AutoLeading": Float(LEADING),
        "LeadingType": 0,
        "Hanging": False,
        "Burasagari": False,
        "KinsokuOrder": 0,
        "EveryLineComposer": False,
    }


def _style(text: TypeText) -> dict:
    """The one style run's properties: the font, its size, bold for a shout, the ink,
    the column's tracking."""
    return {
        "Font": 1,
        "FontSize": Float(text.size),
        "FauxBold": text.bold,
        "FauxItalic": False,
        "AutoLeading": False,
        "Leading": Float(text.size * (COLUMN_WIDTH if text.vertical else LEADING)),
        "HorizontalScale": Float(1),
        "VerticalScale": Float(1),
        "Tracking": round((COLUMN_STEP - 1) * 1000) if text.vertical else 0,
        "AutoKerning": True,
        "Kerning": 0,
        "BaselineShift": Float(0),
        "FontCaps": 0,
        "FontBaseline": 0,
        "Underline": False,
        "Strikethrough": False,
        "Ligatures": True,
        "DLigatures": False,
        "BaselineDirection": 2,
        "Tsume": Float(0),
        "StyleRunAlignment": 2,
        "Language": 0,  # the hyphenation dictionary; none is hyphenated (AutoHyphenate off)
        "NoBreak": False,
        "FillColor": {"Type": 1, "Values": [Float(1)] + [Float(c / 255) for c in text.color]},
        "StrokeColor": {"Type": 1, "Values": [Float(1), Float(0), Float(0), Float(0)]},
        "FillFlag": True,
        "StrokeFlag": False,
        "FillFirst": True,
        "YUnderline": 1,
        "OutlineWidth": Float(1),
        "CharacterDirection": 0,
        "HindiNumbers": False,
        "Kashida": 1,
        "DiacriticPos": 2,
    }


def _shape(text: TypeText) -> dict:
    """Photoshop's own record of the box the text is set in (area type)."""
    return {
        "ShapeType": 1,  # area ("paragraph") type: a box
        "BoxBounds": [
            Float(0),
            Float(0),
            Float(text.box[2] - text.box[0]),
            Float(text.box[3] - text.box[1]),
        ],
        "Base": {
            "ShapeType": 1,
            "TransformPoint0": [Float(1), Float(0)],
            "TransformPoint1": [Float(0), Float(1)],
            "TransformPoint2": [Float(0), Float(0)],
        },
    }


def _resources(*, paragraph: dict, style: dict, fonts: list) -> dict:
    """The engine's resources: the Japanese line-breaking sets, the normal sheets, the fonts."""
    return {
        "KinsokuSet": [
            {
                "Name": "PhotoshopKinsokuHard",
                "NoStart": (
                    "、。，．・：；？！ー―’”）〕］｝〉》」』】ヽヾゝゞ々ぁぃぅぇぉ"
                    "っゃゅょゎァィゥェォッャュョヮヵヶ゛゜?!)]},.:;℃℉¢％‰"
                ),
                "NoEnd": "‘“（〔［｛〈《「『【([{￥＄£＠§〒＃",
                "Keep": "―‥",
                "Hanging": "、。.,",
            },
        ],
        "MojiKumiSet": [{"InternalName": f"Photoshop6MojiKumiSet{n}"} for n in range(1, 5)],
        "TheNormalStyleSheet": 0,
        "TheNormalParagraphSheet": 0,
        "ParagraphSheetSet": [
            {"Name": "Normal RGB", "DefaultStyleSheet": 0, "Properties": paragraph}
        ],
        "StyleSheetSet": [{"Name": "Normal RGB", "StyleSheetData": style}],
        "FontSet": fonts,
        "SuperscriptSize": Float(0.583),
        "SuperscriptPosition": Float(0.333),
        "SubscriptSize": Float(0.583),
        "SubscriptPosition": Float(0.333),
        "SmallCapSize": Float(0.7),
    }


def _document(text: TypeText, *, content: str, paragraph: dict, style: dict) -> dict:
    """The engine's dictionary of the text: its content, its paragraph and style runs,
    how it is drawn (the resources are added by the caller)."""
    return {
        "EngineDict": {
            "Editor": {"Text": content},
            "ParagraphRun": {
                "DefaultRunData": {
                    "ParagraphSheet": {"DefaultStyleSheet": 0, "Properties": {}},
                    "Adjustments": {"Axis": [Float(1), Float(0), Float(1)], "XY": [Float(0)] * 2},
                },
                "RunArray": [
                    {
                        "ParagraphSheet": {"DefaultStyleSheet": 0, "Properties": paragraph},
                        "Adjustments": {
                            "Axis": [Float(1), Float(0), Float(1)],
                            "XY": [Float(0), Float(0)],
                        },
                    }
                ],
                "RunLengthArray": [len(content)],
                "IsJoinable": 1,
            },
            "StyleRun": {
                "DefaultRunData": {"StyleSheet": {"StyleSheetData": {}}},
                "RunArray": [{"StyleSheet": {"StyleSheetData": style}}],
                "RunLengthArray": [len(content)],
                "IsJoinable": 2,
            },
            "GridInfo": {
                "GridIsOn": False,
                "ShowGrid": False,
                "GridSize": Float(18),
                "GridLeading": Float(22),
                "GridColor": {"Type": 1, "Values": [Float(0), Float(0), Float(0), Float(1)]},
                "GridLeadingFillColor": {
                    "Type": 1,
                    "Values": [Float(0), Float(0), Float(0), Float(1)],
                },
                "AlignLineHeightToGridFlags": False,
            },
            "AntiAlias": 3,  # smooth, as the descriptor's AnSm
            "UseFractionalGlyphWidths": True,
            "Rendered": {
                "Version": 1,
                "Shapes": {
                    "WritingDirection": 2 if text.vertical else 0,
                    "Children": [
                        {
                            "ShapeType": 1,
                            "Procession": 1 if text.vertical else 0,
                            "Lines": {
                                "WritingDirection": 2 if text.vertical else 0,
                                "Children": [],
                            },
                            "Cookie": {"Photoshop": _shape(text)},
                        }
                    ],
                },
            },
        },
    }


def _font(name: str) -> dict:
    return {"Name": name, "Script": 0, "FontType": 1, "Synthetic": 0}


def _value(value, depth: int) -> bytes:
    """One EngineData value: a dictionary (`<< /Key value >>`, one entry a line, indented
    by tabs), an array, a string, a boolean or a number."""
    tabs = b"\t" * depth
    if isinstance(value, dict):
        entries = b"".join(
            tabs + b"\t/" + key.encode("ascii") + _spaced(item, depth + 1) + b"\n"
            for key, item in value.items()
        )
        return b"<<\n" + entries + tabs + b">>"
    if isinstance(value, list):
        if all(isinstance(item, int | float) and not isinstance(item, bool) for item in value):
            return b"[" + b"".join(b" " + write_number(item) for item in value) + b" ]"
        items = b"".join(tabs + b"\t" + _value(item, depth + 1) + b"\n" for item in value)
        return b"[\n" + items + tabs + b"]"
    if isinstance(value, str):
        encoded = b"\xfe\xff" + value.encode("utf-16-be")
        for special in (b"\\", b"(", b")"):  # escaped byte by byte, as the engine reads them
            encoded = encoded.replace(special, b"\\" + special)
        return b"(" + encoded + b")"
    if isinstance(value, bool):
        return b"true" if value else b"false"
    return write_number(value)


def _spaced(value, depth: int) -> bytes:
    if isinstance(value, dict):
        return b"\n" + b"\t" * depth + _value(value, depth)
    return b" " + _value(value, depth)


def write_number(value: float) -> bytes:
    """An integer as digits; a real with a point and no trailing zeros (`.5`, `24.0`)."""
    if not isinstance(value, Float) and float(value).is_integer():
        return b"%d" % value
    written = (b"%.5f" % value).rstrip(b"0")
    written = written + b"0" if written.endswith(b".") else written
    if written.startswith(b"0."):
        written = written[1:]
    elif written.startswith(b"-0."):
        written = b"-" + written[2:]
    return written


# --- fonts -----------------------------------------------------------------------------------


def postscript_name(font: ImageFont.FreeTypeFont) -> str:
    """The font's PostScript name (the `name` table's record 6), the name by which
    Photoshop finds a font; its family and style run together when the file has none."""
    found = _name_record(str(font.path), 6) if getattr(font, "path", None) else None
    if found:
        return found
    family, style = font.getname()
    return f"{family}-{style}".replace(" ", "")


@lru_cache(maxsize=16)
def _name_record(path: str, name_id: int) -> str | None:
    """Record `name_id` of the OpenType `name` table of the font file at `path`
    (TrueType or CFF outlines; a collection's first font), or None."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    offset = struct.unpack(">I", data[12:16])[0] if data[:4] == b"ttcf" else 0
    (tables,) = struct.unpack(">H", data[offset + 4 : offset + 6])
    for n in range(tables):
        entry = offset + 12 + 16 * n
        tag, _, start, _ = struct.unpack(">4sIII", data[entry : entry + 16])
        if tag != b"name":
            continue
        _, count, strings = struct.unpack(">HHH", data[start : start + 6])
        for r in range(count):
            record = start + 6 + 12 * r
            platform, _, _, nid, length, at = struct.unpack(">6H", data[record : record + 12])
            if nid != name_id:
                continue
            raw = data[start + strings + at : start + strings + at + length]
            return raw.decode("utf-16-be" if platform in (0, 3) else "latin-1")
    return None
