"""Providers in a registry: each module of renderers/providers/ registers itself with the
verbs it can do; the renderer for each purpose is the settings' choice, so one process
holds several (a sheet drawn by one provider while panels are drawn by another)."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from mangagen.characters import services as sheets
from mangagen.renderers import get_renderer, registry
from mangagen.renderers.base import Verb
from mangagen.renderers.catalog import RendererName
from tests.support.providers.openai_compatible import LocalAIStandIn

RENDERERS = Path(registry.__file__).parent


def calls_register(source: Path) -> bool:
    return any(
        isinstance(node, ast.Call) and getattr(node.func, "id", "") == "register"
        for node in ast.walk(ast.parse(source.read_text()))
    )


def test_each_provider_is_a_module_of_providers_that_registers_its_name():
    modules = {m.name for m in pkgutil.iter_modules([str(RENDERERS / "providers")])}
    assert modules == set(RendererName)
    for name in RendererName:
        found = registry.provider(name)
        assert found.name == name and found.verbs == frozenset(Verb)
        assert found.build().name == name


def test_the_top_level_holds_the_contract_and_shared_pieces_only():
    """No provider is built or registered beside the contract (registry.py defines
    `register`; the providers call it)."""
    assert [p.name for p in RENDERERS.glob("*.py") if calls_register(p)] == []
    for provider in (RENDERERS / "providers").iterdir():
        source = provider / "__init__.py" if provider.is_dir() else provider
        if provider.name not in ("__init__.py", "__pycache__") and source.suffix == ".py":
            assert calls_register(source), provider.name


def test_an_unknown_provider_is_refused():
    with pytest.raises(ValueError, match="Unknown RENDERER 'crayons'"):
        registry.provider("crayons")
    with pytest.raises(ValueError):
        registry.register("crayons", verbs=[Verb.RENDER], build=lambda: get_renderer())


def test_each_purpose_is_drawn_by_the_provider_the_settings_choose(settings):
    settings.RENDERER_FOR = {"sheet": "openai"}
    assert registry.renderer_for(Verb.SHEET).name == "openai"
    assert registry.renderer_for(Verb.RENDER).name == "procedural"
    assert registry.renderer_for(Verb.TOUCH_UP).name == "procedural"
    assert get_renderer().name == "procedural"


def test_a_provider_that_cannot_do_a_purpose_refuses_to_start(settings):
    procedural = registry.provider("procedural")
    try:
        registry.register("procedural", verbs=[Verb.RENDER, Verb.SHEET], build=procedural.build)
        registry.check_purposes()  # RENDERER's: a touch-up is refused when asked for
        assert not registry.supports(Verb.TOUCH_UP) and registry.supports(Verb.SHEET)
        settings.RENDERER_FOR = {"touch-up": "procedural"}
        with pytest.raises(ImproperlyConfigured, match="cannot touch-up"):
            registry.check_purposes()
        with pytest.raises(ValueError, match="cannot touch-up"):
            registry.renderer_for(Verb.TOUCH_UP)
    finally:
        registry.register("procedural", verbs=procedural.verbs, build=procedural.build)


@pytest.mark.django_db
@pytest.mark.board(characters=[{"name": "Aiko", "description": "red scarf"}])
@pytest.mark.usefixtures("instant_renders")
def test_a_sheet_is_drawn_by_its_provider_while_panels_are_drawn_by_another(
    settings, account, board, run, sheet_queue, user
):
    with LocalAIStandIn() as localai:
        settings.RENDERER_FOR = {"sheet": "openai"}
        settings.IMAGES_BASE_URL = localai.url
        settings.IMAGES_SERVER = "localai"
        settings.IMAGES_SIZE = "1024x768"
        settings.RENDER_HTTP_RETRIES = 0
        with run.commits():
            sheet = sheets.request_sheet(storyboard=board, name="Aiko")
        assert run.render_sheet() == "shown"
        job = run.generate(user, board)
        assert run.render() == "delivered"
    assert len(localai.made) == 1 and "Aiko" in localai.made[0]["prompt"]  # the sheet alone
    sheet.refresh_from_db()
    assert sheet.state == "ready"
    assert job.panels.get(index=1).state == "delivered"  # drawn by the procedural renderer
