"""Input a client should never send is refused in the error shape, never a 500 (issue #45,
item 6): a number out of any range in a touch-up's box, a body in a charset no one
reads."""

from __future__ import annotations

import pytest

from tests.support import factories
from tests.support.factories import balance

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]

BIG = "9" * 400


@pytest.fixture
def kept(board):
    factories.keep(board)
    return board


@pytest.mark.parametrize("number", [BIG, f"-{BIG}", "1e400", f"{BIG}.5"])
def test_a_touch_up_box_with_a_number_out_of_range_is_400_invalid(person, kept, account, number):
    answer = person.generic(
        "POST",
        f"/api/storyboards/{kept.pk}/panels/1/touchup/",
        f'{{"box": [{number}, 0.1, 0.2, 0.2]}}',
        content_type="application/json",
    )
    assert answer.status_code == 400, answer.content[:300]
    assert answer.json()["error"] == "invalid"
    assert balance(account) == (10, 0)


@pytest.mark.parametrize("charset", ["ebcdic", "no-such-charset", "bz2_codec"])
def test_a_body_in_a_charset_no_one_reads_is_400_parse_error(person, kept, account, charset):
    answer = person.generic(
        "POST",
        f"/api/storyboards/{kept.pk}/panels/1/touchup/",
        b'{"box": [0.1, 0.1, 0.2, 0.2]}',
        content_type=f"application/json; charset={charset}",
    )
    assert answer.status_code == 400, answer.content[:300]
    assert answer.json()["error"] == "parse_error"
    assert "charset" in answer.json()["detail"]
    assert charset not in answer.json()["detail"]
    assert balance(account) == (10, 0)


def test_a_body_in_a_charset_the_api_reads_is_read(person, kept, account):
    answer = person.generic(
        "POST",
        f"/api/storyboards/{kept.pk}/panels/1/touchup/",
        '{"box": [0.1, 0.1, 0.2, 0.2], "prompt": "é"}'.encode("latin-1"),
        content_type="application/json; charset=ISO-8859-1",
    )
    assert answer.status_code == 202, answer.content[:300]
