"""The type tool block written by hand (typetool.py), against Adobe's specification and
two readers that did not write it: psd-tools' parsers and psdparse's."""

from __future__ import annotations

import io
import struct

import psdparse
import pytest
from PIL import Image
from psd_tools import PSDImage
from psd_tools.constants import Tag
from psd_tools.psd.engine_data import EngineData
from psd_tools.psd.tagged_blocks import TaggedBlock, TypeToolObjectSetting

from mangagen.lettering.fonts import cjk_font, lettering_font, title_font
from mangagen.pages.typetool import (
    Float,
    TypeText,
    engine_data,
    postscript_name,
    type_tool_block,
    write_number,
)

TEXT = TypeText(
    text=r"Who's (there)? \o/ — 誰？",
    font="Kalam-Regular",
    size=25.0,
    box=(40.5, 60.0, 180.25, 120.0),
    centred=True,
    color=(96, 96, 96),
)


def test_the_block_is_laid_out_as_the_specification_says():
    data = type_tool_block(TEXT, index=3)
    assert len(data) % 4 == 0
    version, *transform = struct.unpack(">H6d", data[:50])
    assert version == 1 and transform == [1.0, 0.0, 0.0, 1.0, 40.5, 60.0]
    text_version, descriptor_version = struct.unpack(">HI", data[50:56])
    assert (text_version, descriptor_version) == (50, 16)
    # The descriptor: a Unicode name (one NUL), a class ID of four characters ('TxLr').
    assert data[56:66] == struct.pack(">I", 1) + b"\x00\x00" + struct.pack(">I", 0)
    assert data[66:70] == b"TxLr"
    block = TypeToolObjectSetting.frombytes(data)
    assert block.text_data[b"Txt "].value == TEXT.text + "\x00"
    assert block.text_data[b"TextIndex"].value == 3
    assert block.text_data[b"Ornt"].enum == b"Hrzn"
    assert block.warp[b"warpStyle"].enum == b"warpNone"
    assert dict(block.text_data[b"bounds"]) == {
        b"Left": 0.0,
        b"Top ": 0.0,
        b"Rght": pytest.approx(139.75),
        b"Btom": 60.0,
    }


def test_engine_data_reads_back_whole_in_psd_tools():
    engine = EngineData.frombytes(engine_data(TEXT))
    assert engine["EngineDict"]["Editor"]["Text"].value == TEXT.text + "\r"
    style = engine["EngineDict"]["StyleRun"]["RunArray"][0]["StyleSheet"]["StyleSheetData"]
    assert style["FontSize"].value == 25.0 and isinstance(style["FontSize"].value, float)
    assert [round(v.value * 255) for v in style["FillColor"]["Values"]] == [255, 96, 96, 96]
    fonts = [f["Name"].value for f in engine["ResourceDict"]["FontSet"]]
    assert fonts[style["Font"].value] == "Kalam-Regular"
    assert engine["EngineDict"]["StyleRun"]["RunLengthArray"][0] == len(TEXT.text) + 1
    assert (
        engine["EngineDict"]["ParagraphRun"]["RunArray"][0]["ParagraphSheet"]["Properties"][
            "Justification"
        ]
        == 2
    )


@pytest.mark.parametrize(
    "value, written",
    [
        (Float(24), b"24.0"),
        (Float(0.5), b".5"),
        (Float(-0.25), b"-.25"),
        (7, b"7"),
        (0.333, b".333"),
    ],
)
def test_reals_are_written_with_a_point_as_the_text_engine_reads_them(value, written):
    assert write_number(value) == written


def test_a_vertical_type_layer_in_a_psd_is_read_as_such_by_both_readers():
    vertical = TypeText("「誰だ」", "NotoSansCJKtc-Regular", 30.0, (10, 10, 50, 200), vertical=True)
    document = PSDImage.new("RGBA", (64, 256), color=(255, 255, 255, 255))
    layer = document.create_pixel_layer(Image.new("RGBA", (40, 190)), name="t", top=10, left=10)
    layer.tagged_blocks[Tag.TYPE_TOOL_OBJECT_SETTING] = TaggedBlock(
        key=Tag.TYPE_TOOL_OBJECT_SETTING, data=type_tool_block(vertical)
    )
    buffer = io.BytesIO()
    document.save(buffer)
    read = PSDImage.open(io.BytesIO(buffer.getvalue()))[0]
    assert read.kind == "type" and read.text == "「誰だ」"
    assert read.engine_dict["Rendered"]["Shapes"]["WritingDirection"] == 2
    other = psdparse.PSDFile()
    other.load_bytes(buffer.getvalue())
    text = dict(other.layers[0].text)
    assert text["text"] == "「誰だ」\r" and text["orientation"] == "vertical"
    assert text["runs"][0]["size_px"] == 30.0
    assert other.text_fonts(0) == ["AdobeInvisFont", "NotoSansCJKtc-Regular"]


def test_the_shipped_fonts_are_named_as_photoshop_finds_them():
    assert postscript_name(lettering_font(20)) == "Kalam-Regular"
    assert postscript_name(title_font(20)) == "Kalam-Bold"
    assert postscript_name(cjk_font(20)) == "NotoSansCJKtc-Regular"
