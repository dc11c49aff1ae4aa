"""The procedural renderer's draft model: a rough is the final's composition in pencil."""

import io
import uuid
from dataclasses import replace

import pytest
from PIL import Image

from mangagen.renderers.base import CharacterSpec, FromRoughSpec, PanelSpec, Verb, draw, sized
from mangagen.renderers.gpu_pool import GpuPool, Priority
from mangagen.renderers.providers.procedural import ProceduralRenderer
from tests.support.pictures import outline_likeness

SPEC = PanelSpec(
    style="manga",
    description="Aiko and Kenji on the roof.",
    shot="medium",
    characters=(
        CharacterSpec("Aiko", "long black hair, red scarf", position="left"),
        CharacterSpec("Kenji", "spiky hair, glasses"),
    ),
    art_hash="roof",
)


@pytest.fixture
def renderer():
    pool = GpuPool(prefix=f"test:gpu:{uuid.uuid4()}", idle_seconds=60)
    return ProceduralRenderer(
        width=768,
        height=544,
        pool=pool,
        cold_start_seconds=0,
        render_seconds=0,
        rough_seconds=0,
    )


def size_of(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


def test_a_rough_is_its_finals_composition_and_another_seed_is_not(renderer):
    """The rough of seed 7 and the final drawn from it (the same spec and seed) have the
    same outlines; the same panel's finals of other seeds (framed otherwise, as a model's
    seed frames a shot) are far less alike."""
    rough = draw(renderer, Verb.ROUGH, SPEC, 7, priority=Priority.ROUGH)
    final = draw(renderer, Verb.FROM_ROUGH, FromRoughSpec(SPEC, rough.image), 7)
    assert final.metadata["from_rough"] and not rough.metadata["from_rough"]
    kept = outline_likeness(rough.image, final.image)
    others = [outline_likeness(rough.image, renderer.draw(SPEC, seed)) for seed in range(20, 28)]
    assert kept > 0.8
    assert kept > sum(others) / len(others) + 0.3
    assert rough.metadata["faces"] == final.metadata["faces"]


def test_a_rough_is_small_fast_and_learned_apart_from_finals(renderer):
    rough = renderer.rough(SPEC, 7)
    final = renderer.render(SPEC, 7)
    assert size_of(rough.image) == (384, 272) and size_of(final.image) == (768, 544)
    assert rough.metadata["model"] == "simulated-draft" and final.metadata["model"] == "simulated"
    with Image.open(io.BytesIO(rough.image)) as image:
        colours = image.convert("RGB").getcolors(1 << 16)
    assert max(colours)[1] == (251, 249, 243)  # mostly paper: a pencil sketch, no screentone


def test_a_final_is_drawn_at_its_cells_shape(renderer):
    tall = replace(SPEC, aspect="2:3")
    final = renderer.render(tall, 7)
    rough = renderer.rough(tall, 7)
    width, height = size_of(final.image)
    assert (final.width, final.height) == (width, height) == sized("2:3", 768, 544)
    assert abs(width / height - 2 / 3) < 0.02 and width * height == pytest.approx(
        768 * 544, rel=0.03
    )
    rough_w, rough_h = size_of(rough.image)
    assert abs(rough_w / rough_h - 2 / 3) < 0.02
    assert sized("", 768, 544) == (768, 544) and sized("nonsense", 768, 544) == (768, 544)


def test_roughs_take_rough_seconds_and_finals_render_seconds(renderer):
    timed = ProceduralRenderer(
        width=160,
        height=120,
        pool=renderer.pool,
        cold_start_seconds=0,
        render_seconds=0.4,
        rough_seconds=0.05,
    )
    rough = timed.rough(SPEC, 1)
    final = timed.render(SPEC, 1)
    assert 0.05 <= rough.metadata["phases"]["render"] < 0.4 <= final.metadata["phases"]["render"]
