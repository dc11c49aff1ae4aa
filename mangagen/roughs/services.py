"""Asking for roughs: every panel without one, or one panel again with another seed.

Gated before any spend, as speculation is: a person without a credit (available or
held) gets `no_credits` and nothing is drawn; past the day's budget, `rough_budget`.
Roughs never hold or move a credit: their cost is the operator's.
"""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext

from ledger import selectors as ledger_selectors
from mangagen.pages.shapes import cell_aspects
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import Panel, Storyboard

from . import budget, dispatch
from .errors import NoCredits, RoughBudget
from .models import LIVE_STATES, Rough
from .selectors import current_roughs, wants_drawing

SEEDS = 2**32  # a seed is 32 bits, as the providers' are


def first_seed(art_hash: str) -> int:
    """The seed a panel's final is drawn with when nothing else says (the renderers'
    `PanelSpec.default_seed`): the first rough of an art hash is drawn with it."""
    return int(hashlib.sha256(art_hash.encode()).hexdigest()[:8], 16)


def check_eligible(*, user) -> None:
    """Raises NoCredits for a person with no credit, available or held."""
    available, held = ledger_selectors.balance_of(user_id=user.pk)
    if available + held < 1:
        raise NoCredits(
            gettext(
                "Rough pages are for people with credits: get credits, and the whole "
                "comic is drafted for free before you pay for a panel."
            )
        )


def _refuse_budget() -> RoughBudget:
    now = timezone.now()
    return RoughBudget(
        gettext(
            "You have had today's %(limit)s roughs; the ones drawn stay, and more can be "
            "drawn tomorrow."
        )
        % {"limit": budget.limit()},
        retry_after=budget.seconds_to_tomorrow(now),
    )


def request_roughs(*, user, storyboard: Storyboard) -> list[Rough]:
    """Draws a rough of every panel (with a description) whose art hash has none, or only
    a failed one, in reading order: as many as the day's budget allows. Returns the
    roughs asked for now. Raises NoCredits, or RoughBudget when one was wanted and none
    could be."""
    check_eligible(user=user)
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        panels = [p for p in storyboard.panels.all() if p.description.strip()]
        current = current_roughs(
            storyboard_id=storyboard.pk, art_hashes=[p.art_hash for p in panels]
        )
        wanted: list[Panel] = []
        for panel in panels:  # two panels with one art hash share their rough
            if wants_drawing(current.get(panel.art_hash)) and panel.art_hash not in {
                p.art_hash for p in wanted
            }:
                wanted.append(panel)
        if not wanted:
            return []
        granted = budget.take(user_id=user.pk, wanted=len(wanted))
        if granted == 0:
            raise _refuse_budget()
        shapes = cell_aspects(storyboard=storyboard, panels=list(storyboard.panels.all()))
        made = [
            _ask(storyboard, panel, seed=first_seed(panel.art_hash), aspect=shapes)
            for panel in wanted[:granted]
        ]
    return made


def redraw_rough(*, user, storyboard: Storyboard, index: int) -> Rough:
    """Draws panel `index`'s rough again with another seed (its final will be drawn
    with that seed). Raises Http404 for no such panel, NoCredits, RoughBudget."""
    check_eligible(user=user)
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        panels = list(storyboard.panels.all())
        panel = next((p for p in panels if p.index == index), None)
        if panel is None or not panel.description.strip():
            raise Http404("No such panel, or it says nothing to draw yet.")
        if budget.take(user_id=user.pk, wanted=1) == 0:
            raise _refuse_budget()
        previous = current_roughs(storyboard_id=storyboard.pk, art_hashes=[panel.art_hash]).get(
            panel.art_hash
        )
        seed = first_seed(panel.art_hash) if previous is None else (previous.seed + 1) % SEEDS
        if previous is not None and previous.state in LIVE_STATES:
            dispatch.withdraw_on_commit(ticket=previous.ticket)  # nobody will see it
        return _ask(
            storyboard, panel, seed=seed, aspect=cell_aspects(storyboard=storyboard, panels=panels)
        )


def _ask(storyboard: Storyboard, panel: Panel, *, seed: int, aspect: dict[int, str]) -> Rough:
    rough = Rough.objects.create(
        storyboard=storyboard,
        art_hash=panel.art_hash,
        index=panel.index,
        seed=seed,
        aspect=aspect.get(panel.index, ""),
    )
    dispatch.draw_on_commit(rough_id=rough.pk)
    return rough
