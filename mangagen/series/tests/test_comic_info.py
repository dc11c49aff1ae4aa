"""Every ComicInfo.xml validates against the ComicInfo v2.0 schema (tests/support/comicinfo.py),
whose elements come in a fixed order."""

import io
import zipfile

import pytest

from mangagen.pages.exports import COMIC_INFO_ORDER, comic_info_xml
from mangagen.series import services as series
from mangagen.storyboards import services as storyboards
from tests.support import comicinfo, factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


@pytest.fixture(scope="module")
def schema():
    return comicinfo.schema()


def cbz_info(client, board) -> str:
    response = client.get(f"/api/storyboards/{board.pk}/export/?format=cbz")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        return archive.read("ComicInfo.xml").decode()


def test_the_validator_refuses_the_old_order(schema):
    """What the export wrote before: BlackAndWhite after Manga. The schema refuses it, so
    the tests below can fail."""
    old = (
        '<?xml version="1.0" encoding="utf-8"?><ComicInfo><Title>t</Title>'
        "<PageCount>1</PageCount><Manga>No</Manga><BlackAndWhite>Yes</BlackAndWhite>"
        '<Pages><Page Image="0" Type="FrontCover" /></Pages></ComicInfo>'
    )
    assert not schema.is_valid(old)
    assert not schema.is_valid(old.replace("<Manga>No</Manga>", "<Manga>Sideways</Manga>"))


def test_the_writer_knows_the_schemas_order():
    assert list(COMIC_INFO_ORDER) == [name for name, _ in comicinfo.ELEMENTS]


def test_a_standalone_comics_cbz_validates(client, user, schema):
    board = factories.storyboard(
        user,
        characters=[{"name": "Aiko"}],
        panels=[{"description": "Aiko runs.", "characters": ["Aiko"]}, {"description": "Two."}],
    )
    factories.keep(board)
    client.force_login(user)
    info = cbz_info(client, board)
    schema.validate(info)
    assert "<Series>" not in info and "<Characters>Aiko</Characters>" in info


def test_a_chapters_cbz_validates_with_series_number_and_count(client, user, schema):
    made = series.create_series(owner=user, title="Rooftops")
    board = series.start_chapter(series=made, story="", title="One")
    storyboards.update_storyboard(
        storyboard=board,
        places=[{"name": "Roof & stairs"}],
        panels=[{"description": "The roof.", "place": "Roof & stairs"}],
    )
    series.start_chapter(series=made, story="")
    factories.keep(board)
    client.force_login(user)
    info = cbz_info(client, board)
    schema.validate(info)
    assert "<Number>1</Number><Count>2</Count>" in info
    assert "<Locations>Roof &amp; stairs</Locations>" in info


def test_every_element_lands_in_its_place(schema):
    """LanguageISO (a translation's) and the rest, given in any order, come out valid."""
    fields = {
        "Manga": "YesAndRightToLeft",
        "LanguageISO": "ja",
        "Title": "t",
        "Count": 3,
        "BlackAndWhite": "Yes",
        "Number": "2",
        "Series": "s",
        "PageCount": 2,
    }
    schema.validate(comic_info_xml(fields, pages=2))
    with pytest.raises(ValueError, match="Colour"):
        comic_info_xml({"Colour": "no"}, pages=1)
