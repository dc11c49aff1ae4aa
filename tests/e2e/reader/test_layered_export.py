"""The layered export as a person gets it (#51): from the reader, "PSD (layers)" downloads
the page shown as a PSD whose lettering is editable type, and "PSD, every page (ZIP)"
every page."""

import re
import zipfile

from playwright.sync_api import expect
from psd_tools import PSDImage

from ..test_generate import make_comic
from ..test_wizard import sign_up
from .test_pages import approve_all


def test_the_reader_downloads_the_page_shown_as_a_layered_psd(page, stack, shoot, tmp_path):
    sign_up(page, "finisher")
    stack.manage("grant_credits", "finisher", "3", "--reason", "e2e")
    board = make_comic(page, "Rooftops")
    page.goto(f"/comics/{board}/review/")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    approve_all(page, 3)

    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    layered = page.get_by_role("link", name="PSD (layers)")
    expect(layered).to_have_attribute("href", f"/api/storyboards/{board}/export/psd/?page=1")
    shoot("reader-psd")
    with page.expect_download() as download:
        layered.click()
    assert download.value.suggested_filename == "rooftops-page-01.psd"
    saved = tmp_path / "page.psd"
    download.value.save_as(saved)
    document = PSDImage.open(saved)
    pages = page.request.get(f"/api/storyboards/{board}/pages/").json()["pages"]
    assert [g.name for g in document if g.is_group()] == [f"Panel {i}" for i in pages[0]["panels"]]
    typed = [layer.text for layer in document.descendants() if layer.kind == "type"]
    assert "They're right behind us!" in typed  # panel 2's line, on page one

    with page.expect_download() as every:
        page.get_by_role("link", name="PSD, every page (ZIP)").click()
    assert every.value.suggested_filename == "rooftops-psd.zip"
    archive = zipfile.ZipFile(every.value.path())
    assert archive.namelist() == [f"page-{n:02d}.psd" for n in range(1, len(pages) + 1)]
