"""Roughs: free drafts of every panel, for people with a credit, within a day's budget."""

import pytest
from django.urls import reverse

from ledger.models import Hold, Transfer
from mangagen.orchestration import comic_deletion as deletion
from mangagen.renderers.gpu_pool import GpuPool, Priority
from mangagen.roughs import services
from mangagen.roughs.models import Rough, RoughState
from mangagen.storyboards import services as storyboards
from tests.support import factories
from tests.support.boards import TWO_OF_THEM_CAST, TWO_OF_THEM_PANELS
from tests.support.factories import balance

PANELS = TWO_OF_THEM_PANELS

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(
        characters=TWO_OF_THEM_CAST,
        panels=PANELS,
    ),
]


def roughs_url(board) -> str:
    return reverse("api-storyboard-roughs", args=[board.pk])


def ask(client, board, *, commits):
    with commits():
        return client.post(roughs_url(board), {}, content_type="application/json")


def by_index(client, board) -> dict[int, dict]:
    return {r["index"]: r for r in client.get(roughs_url(board)).json()["roughs"]}


def test_no_credit_no_rough_and_nothing_drawn(person, board, run, rough_queue):
    factories.funded_account(board.owner, 0)
    answer = ask(person, board, commits=run.commits)
    assert answer.status_code == 402
    assert answer.json()["error"] == "no_credits" and answer.json()["purchase_url"]
    assert rough_queue == [] and not Rough.objects.exists()
    assert by_index(person, board) == {}


def test_a_credit_held_is_a_credit(person, board, run, rough_queue):
    """Available or held: a person whose only credit is held by a render is offered roughs."""
    account = factories.funded_account(board.owner, 1)
    from ledger import services as ledger

    ledger.authorize(account=account, amount=1, key="held", reference="test", expires_in=600)
    assert balance(board.owner) == (0, 1)
    assert ask(person, board, commits=run.commits).status_code == 202


def test_every_panel_gets_a_free_rough_in_the_lowest_queue(person, board, run, rough_queue):
    factories.funded_account(board.owner, 3)
    before = (balance(board.owner), Hold.objects.count(), Transfer.objects.count())
    answer = ask(person, board, commits=run.commits)
    assert answer.status_code == 202
    body = answer.json()
    assert [r["state"] for r in body["roughs"]] == ["queued"] * 4
    assert body["budget"] == {"used": 4, "limit": 60}
    assert [queue for _, queue in rough_queue] == ["speculative"] * 4
    assert run.draw_roughs() == ["ready"] * 4
    shown = by_index(person, board)
    assert sorted(shown) == [1, 2, 3, 4]
    assert all(r["state"] == "ready" and r["image_url"] for r in shown.values())
    assert all(r["seconds"] is not None for r in shown.values())
    image = person.get(shown[2]["image_url"])
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    # Free: no credit moved, no hold placed, nothing written to the journal.
    assert (balance(board.owner), Hold.objects.count(), Transfer.objects.count()) == before
    # Asking again draws nothing more: every panel has its rough.
    assert ask(person, board, commits=run.commits).status_code == 202
    assert rough_queue == []


def test_a_rough_is_its_owners_alone(person, board, run, rough_queue, client, make_user):
    factories.funded_account(board.owner, 1)
    ask(person, board, commits=run.commits)
    run.draw_roughs()
    url = by_index(person, board)[1]["image_url"]
    other = make_user()
    factories.funded_account(other, 5, key="other")
    client.force_login(other)
    assert client.get(url).status_code == 404
    assert client.get(roughs_url(board)).status_code == 404
    assert client.post(roughs_url(board), {}, content_type="application/json").status_code == 404
    assert (
        client.get(reverse("api-storyboard-pages", args=[board.pk]) + "?rough=1").status_code == 404
    )


def test_past_the_days_budget_429(person, board, run, rough_queue, settings):
    settings.ROUGHS_PER_PERSON_PER_DAY = 3
    factories.funded_account(board.owner, 1)
    first = ask(person, board, commits=run.commits)
    assert first.status_code == 202 and len(rough_queue) == 3  # as many as the day allows
    assert first.json()["budget"] == {"used": 3, "limit": 3}
    again = ask(person, board, commits=run.commits)
    assert again.status_code == 429 and again.json()["error"] == "rough_budget"
    assert int(again["Retry-After"]) > 0
    redraw = person.post(reverse("api-panel-rough", args=[board.pk, 1]))
    assert redraw.status_code == 429
    assert Rough.objects.count() == 3


def test_a_text_edit_keeps_the_rough_and_a_shot_change_redraws_that_panel_alone(
    person, board, run, rough_queue
):
    factories.funded_account(board.owner, 1)
    ask(person, board, commits=run.commits)
    run.draw_roughs()
    drawn = by_index(person, board)
    panels = [dict(p) for p in PANELS]
    panels[1] = {**panels[1], "dialogue": [{"speaker": "Aiko", "text": "Wait!"}]}
    storyboards.update_storyboard(storyboard=board, panels=panels)
    assert by_index(person, board) == drawn  # the art hash is the same: the same rough
    panels[2] = {**panels[2], "shot": "close-up"}
    storyboards.update_storyboard(storyboard=board, panels=panels)
    now = by_index(person, board)
    assert 3 not in now and {i: now[i] for i in (1, 2, 4)} == {i: drawn[i] for i in (1, 2, 4)}
    assert ask(person, board, commits=run.commits).status_code == 202
    assert len(rough_queue) == 1
    (rough_id,), _ = rough_queue[0]
    assert Rough.objects.get(pk=rough_id).index == 3
    run.draw_roughs()
    assert by_index(person, board)[3]["state"] == "ready"


def test_drawing_one_again_takes_another_seed_and_withdraws_the_one_in_flight(
    person, board, run, rough_queue
):
    factories.funded_account(board.owner, 1)
    ask(person, board, commits=run.commits)
    first = Rough.objects.get(index=2)
    with run.commits():
        answer = person.post(reverse("api-panel-rough", args=[board.pk, 2]))
    assert answer.status_code == 202
    second = Rough.objects.filter(index=2).latest("pk")
    assert second.seed == first.seed + 1
    assert GpuPool().withdrawn(first.ticket)  # nobody will see the first one
    outcomes = run.draw_roughs()
    assert outcomes.count("ready") == 4 and "stale" in outcomes  # the first: not drawn
    first.refresh_from_db()
    assert first.state == RoughState.FAILED and not first.image
    assert by_index(person, board)[2]["state"] == "ready"
    assert person.post(reverse("api-panel-rough", args=[board.pk, 9])).status_code == 404


def test_a_redraw_that_lands_lets_the_older_picture_go(person, board, run, rough_queue, media):
    factories.funded_account(board.owner, 1)
    ask(person, board, commits=run.commits)
    run.draw_roughs()
    assert len(media.names(f"roughs/{board.pk}")) == 4
    with run.commits():
        person.post(reverse("api-panel-rough", args=[board.pk, 1]))
    run.draw_roughs()
    assert len(media.names(f"roughs/{board.pk}")) == 4  # the older rough's picture went
    with run.commits():
        deletion.delete_comic(storyboard=board)
    assert media.names(f"roughs/{board.pk}") == []


def test_rough_pages_letter_each_panel_from_its_rough(person, board, run, rough_queue):
    factories.funded_account(board.owner, 1)
    pages_url = reverse("api-storyboard-pages", args=[board.pk])
    empty = person.get(pages_url + "?rough=1").json()
    assert empty["pages"] and empty["roughs"] == []  # the layout shows before any rough
    assert person.get(pages_url).json()["pages"] == []  # the kept pages: none yet
    ask(person, board, commits=run.commits)
    run.draw_rough()  # panel one's alone
    first = person.get(pages_url + "?rough=1").json()
    assert first["roughs"] == [1]
    run.draw_roughs()
    body = person.get(pages_url + "?rough=1").json()
    assert body["roughs"] == [1, 2, 3, 4] and body["kept"] == []
    urls = [page["image_url"] for page in body["pages"]]
    assert all("rough=1" in url for url in urls)
    for url in urls:
        image = person.get(url)
        assert image.status_code == 200 and image["Content-Type"] == "image/png"
    # Each page is keyed by what is on it: a rough drawn again changes its page's image
    # alone (the others keep their addresses, built once, cached by the browser).
    storyboards.update_storyboard(storyboard=board, layout={"breaks": [1, 3]})
    before = person.get(pages_url + "?rough=1").json()["pages"]
    assert [p["panels"] for p in before] == [[1, 2], [3, 4]]
    with run.commits():
        person.post(reverse("api-panel-rough", args=[board.pk, 4]))
    run.draw_roughs()
    after = person.get(pages_url + "?rough=1").json()["pages"]
    assert after[0]["image_url"] == before[0]["image_url"]
    assert after[1]["image_url"] != before[1]["image_url"]
    assert person.get(before[1]["image_url"]).status_code == 404  # that page moved on


def test_the_pool_serves_roughs_last(settings):
    pool = GpuPool(size=1)
    held = pool.try_acquire(ticket="final", priority=Priority.CONFIRMED)
    assert pool.try_acquire(ticket="rough", priority=Priority.ROUGH) is None
    assert pool.try_acquire(ticket="spec", priority=Priority.SPECULATIVE) is None
    pool.release(held)
    assert pool.try_acquire(ticket="rough", priority=Priority.ROUGH) is None
    assert pool.try_acquire(ticket="spec", priority=Priority.SPECULATIVE) is not None


def test_a_panel_without_a_description_gets_no_rough(person, user, run, rough_queue):
    factories.funded_account(user, 1)
    board = factories.storyboard(user, panels=[{"description": "Drawn."}, {"description": ""}])
    ask(person, board, commits=run.commits)
    assert [Rough.objects.get(pk=args[0]).index for args, _ in rough_queue] == [1]
    assert services.first_seed(board.panels.get(index=1).art_hash) == Rough.objects.get().seed


def test_the_prune_lets_go_of_old_roughs_and_of_pictures_no_panel_uses(
    person, board, run, rough_queue, media
):
    from datetime import timedelta

    from django.utils import timezone

    from mangagen.orchestration import pruning

    factories.funded_account(board.owner, 1)
    ask(person, board, commits=run.commits)
    run.draw_roughs()
    panels = [dict(p) for p in PANELS]
    panels[0] = {**panels[0], "description": "A rooftop at dawn."}  # panel one's rough: unused
    storyboards.update_storyboard(storyboard=board, panels=panels)
    unused = Rough.objects.get(index=1)
    assert pruning.prune()["mangagen.roughs.retention.prune_roughs"] == 0  # an edit undone finds it
    Rough.objects.filter(pk=unused.pk).update(created_at=timezone.now() - timedelta(days=2))
    assert pruning.prune()["mangagen.roughs.retention.prune_roughs"] == 1
    assert len(media.names(f"roughs/{board.pk}")) == 3 and Rough.objects.count() == 4
    Rough.objects.update(created_at=timezone.now() - timedelta(days=400))
    assert pruning.prune()["mangagen.roughs.retention.prune_roughs"] == 4
    assert media.names(f"roughs/{board.pk}") == [] and not Rough.objects.exists()
