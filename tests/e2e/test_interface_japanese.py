"""The whole interface in Japanese, as a person with a Japanese browser uses it: sign-up,
the dashboard, a new comic through every step, Generate and the job page until a panel is
delivered, approving, the reader, the translation editor, a series, the credits. On every
screen <html lang="ja">, its headings and buttons in Japanese, no English sentence of the
catalogs left on it (what the server wrote and what the scripts added), no script error;
axe finds nothing serious on the main screens. Then an English browser switches to
Japanese in the header, and the choice stays."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.interface import english_left

from .conftest import Dialogs
from .test_accessibility import violations

STORY = (
    "雨の夜、アイコはネオ京都の屋上を走った。「来たよ！」とアイコは叫んだ。\n\n"
    "ケンジがアイコの手をつかんだ。「一緒に跳ぼう」とケンジは言った。"
)
PASSWORD = "paper-lantern-42"

# What a person reads on the page now: the visible text, and the names, titles, alt
# texts and placeholders of what is on screen (a script's aria-label included).
READ_ON_SCREEN = """() => {
  const parts = [document.body.innerText];
  for (const el of document.querySelectorAll("[aria-label], [title], [alt], [placeholder]")) {
    if (!el.checkVisibility || el.checkVisibility()) {
      for (const name of ["aria-label", "title", "alt", "placeholder"]) {
        if (el.getAttribute(name)) parts.push(el.getAttribute(name));
      }
    }
  }
  return parts.join("\\n");
}"""


@pytest.fixture
def ja_page(browser, stack, request):
    """A page in a browser whose language is Japanese, with its own dialogs and errors."""
    context = browser.new_context(
        base_url=stack.base_url, locale="ja-JP", viewport={"width": 1200, "height": 900}
    )
    dialogs = Dialogs()
    context.on("page", dialogs.watch)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.set_default_timeout(15000)
    page.dialogs = dialogs
    yield page
    if getattr(request.node, "e2e_failed", False):
        from .conftest import ARTIFACTS

        page.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"), full_page=True)
    context.close()
    assert not dialogs.unexpected, f"unexpected browser dialogs: {dialogs.unexpected}"
    assert not dialogs.answers, f"expected dialogs that never came: {dialogs.answers}"


def in_japanese(page, screen: str, *shown: str) -> None:
    """The screen is in Japanese: <html lang>, the given texts shown, no English left."""
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    for text in shown:
        expect(page.get_by_text(text, exact=False).first).to_be_visible()
    left = english_left(page.evaluate(READ_ON_SCREEN))
    assert left == [], f"[{screen}] English left on the screen: {left}"
    assert page.errors == [], f"[{screen}] script errors: {page.errors}"


def test_every_screen_in_japanese(ja_page, stack, shoot_ja):
    page = ja_page
    found: list[str] = []

    # Sign-up, in Japanese from the first visit (the browser's Accept-Language).
    page.goto("/accounts/signup/")
    in_japanese(page, "sign-up", "アカウントを作成")
    found += violations(page, "sign-up, ja")
    page.get_by_label("ユーザー名").fill("nihongo")
    page.get_by_label("パスワード", exact=True).fill(PASSWORD)
    page.get_by_label("パスワード(確認用)").fill(PASSWORD)
    page.get_by_role("button", name="新規登録").click()

    # The dashboard.
    expect(page.get_by_role("heading", name="あなたのマンガ")).to_be_visible()
    stack.manage("grant_credits", "nihongo", "6", "--reason", "e2e")
    page.reload()
    in_japanese(page, "dashboard", "まだマンガがありません", "使用可能")
    found += violations(page, "dashboard, ja")
    shoot_ja("dashboard")

    # 1. Story: a missing title is said in Japanese, by the script.
    page.get_by_role("link", name="＋ 新しいマンガ").click()
    page.get_by_label("ストーリー", exact=True).fill(STORY)
    page.get_by_role("button", name="次へ：キャラクター →").click()
    expect(page.locator('[data-error-for="title"]')).to_have_text(
        "マンガにタイトルを付けてください。"
    )
    page.get_by_label("タイトル").fill("ネオ京都の屋上")
    in_japanese(page, "story", "絵柄", "言語")
    expect(page.locator("#story-count")).to_have_text(str(len(STORY)))
    found += violations(page, "story, ja")
    page.get_by_role("button", name="次へ：キャラクター →").click()

    # 2. Characters.
    expect(page).to_have_url(re.compile(r"/comics/\d+/characters/$"))
    board = int(re.search(r"/comics/(\d+)/", page.url).group(1))
    expect(page.locator("#add-character")).to_be_enabled()  # the script has drawn the rows
    rows = page.locator(".character-row")
    if rows.count() == 0 or rows.first.locator(".c-name").input_value():
        page.get_by_role("button", name="＋ キャラクターを追加").click()
    row = rows.last
    row.locator(".c-name").fill("アイコ")
    row.locator(".c-description").fill("長い黒髪、赤いマフラー")
    expect(page.locator("#save-state")).to_have_text("保存しました", timeout=10000)
    in_japanese(page, "characters", "キャラクターシートはまだありません。", "場所")
    found += violations(page, "characters, ja")
    page.get_by_role("button", name="次へ：ネーム →").click()

    # 3. Storyboard: drafted from the story, the notice and the panels' labels in Japanese.
    expect(page).to_have_url(re.compile(r"/storyboard/$"))
    page.get_by_role("button", name="ストーリーから下書き").click()
    expect(page.locator("#notice")).to_be_visible()
    expect(page.locator(".panel-card").first).to_be_visible()
    expect(page.locator(".panel-card .p-title").first).to_have_text("コマ 1")
    expect(page.get_by_role("button", name="コマ 1 を下へ移動")).to_be_visible()
    in_japanese(page, "storyboard", "構図", "セリフ")
    found += violations(page, "storyboard, ja")
    shoot_ja("storyboard")
    page.get_by_role("button", name="次へ：確認 →").click()

    # 4. Review: the quote, by the script, in Japanese.
    expect(page).to_have_url(re.compile(r"/review/$"))
    expect(page.locator("#quote")).to_contain_text("描くコマ")
    in_japanese(page, "review", "確認", "生成")
    found += violations(page, "review, ja")
    shoot_ja("review")

    # Generate, and the job page until a panel is delivered; approve every panel.
    page.get_by_role("button", name="生成").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    approve = page.locator(".job-panel.current").get_by_role("button", name="承認")
    expect(approve).to_be_visible(timeout=30000)
    expect(page.locator("#progress")).to_contain_text("承認するか描き直してください")
    expect(page.locator(".job-panel.current .label")).to_contain_text("準備できました")
    in_japanese(page, "job, deciding", "中止して保留中のクレジットを戻す")
    found += violations(page, "job, ja")
    shoot_ja("job")
    panels = page.locator(".job-panel").count()
    for index in range(1, panels + 1):
        expect(page.locator("#progress")).to_contain_text(f"{index} コマ目", timeout=30000)
        button = page.locator(".job-panel.current").get_by_role("button", name="承認")
        expect(button).to_be_visible(timeout=30000)
        button.click()
    expect(page.locator("#done")).to_be_visible(timeout=30000)
    expect(page.locator("#progress")).to_contain_text(f"全 {panels} コマを承認しました")
    in_japanese(page, "job, finished", "マンガが完成しました。")

    # The reader.
    page.get_by_role("link", name="読む").click()
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    expect(page.locator("#page-label")).to_contain_text("ページ目・右から左へ読む")
    in_japanese(page, "reader", "PDF をダウンロード", "読む方向")
    found += violations(page, "reader, ja")
    shoot_ja("reader")

    # The translation editor: English added, a line typed and saved.
    page.get_by_role("link", name="翻訳…").click()
    expect(page.locator("#none-yet")).to_be_visible()
    in_japanese(page, "translations, none yet", "まだ翻訳はありません")
    page.get_by_label("言語を追加").select_option("en")
    page.get_by_role("button", name="追加", exact=True).click()
    title = page.get_by_label("英語：タイトル")
    title.fill("Rooftops of Neo-Kyoto")
    expect(page.locator("#save-state")).to_have_text("保存しました", timeout=10000)
    expect(page.locator("#counts")).to_contain_text("翻訳")
    in_japanese(page, "translations, editing", "原文")
    found += violations(page, "translations, ja")
    shoot_ja("translations")

    # A series, its first chapter.
    page.goto("/series/new/")
    in_japanese(page, "series, new", "新しいシリーズ")
    page.get_by_label("タイトル").fill("ネオ京都")
    page.get_by_role("button", name="シリーズを始める").click()
    expect(page.locator("#chapter-form")).to_be_visible()
    in_japanese(page, "series, empty", "まだ話がありません")
    page.get_by_label("ストーリー").fill(STORY)
    page.get_by_role("button", name="第 1 話を始める").click()
    expect(page).to_have_url(re.compile(r"/characters/$"))
    in_japanese(page, "characters, a chapter", "ネオ京都 第 1 話")
    page.get_by_role("link", name="ネオ京都 第 1 話").click()
    expect(page.locator("#chapters li")).to_have_count(1)
    in_japanese(page, "series, a chapter", "第 1 話：", "次の話")
    found += violations(page, "series, ja")
    shoot_ja("series")

    # The credits: what was spent, in Japanese.
    page.goto("/credits/")
    in_japanese(page, "credits", "履歴", "使用可能")
    # Each credit named by its comic and panel, and how it ended.
    expect(page.locator("#history")).to_contain_text(re.compile(r"：コマ \d"))
    expect(page.locator("#history")).to_contain_text("支払い済み")
    found += violations(page, "credits, ja")
    shoot_ja("credits")

    assert not found, "accessibility violations:\n" + "\n".join(found)


def test_the_switcher_turns_an_english_browser_japanese_and_remembers(page):
    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill("switcher")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.goto("/credits/?page=1")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="Credits", exact=True)).to_be_visible()

    page.get_by_role("button", name="日本語").click()
    expect(page).to_have_url(re.compile(r"/credits/\?page=1$"))  # back on the same page
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.get_by_role("heading", name="クレジット", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="日本語")).to_be_disabled()

    page.goto("/")  # the choice stays, in a cookie, over the browser's English
    expect(page.get_by_role("heading", name="あなたのマンガ")).to_be_visible()
    page.goto("/comics/new/")
    page.get_by_role("button", name="次へ：キャラクター →").click()
    expect(page.locator('[data-error-for="title"]')).to_have_text(
        "マンガにタイトルを付けてください。"
    )

    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="Your story")).to_be_visible()
    page.goto("/")
    expect(page.get_by_role("heading", name="Your comics")).to_be_visible()
