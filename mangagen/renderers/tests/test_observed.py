"""Learning the provider (mangagen/renderers/observed.py): each render's phases kept per
renderer and model, bounded; medians with the settings as the prior; what
cancelling saved; `manage.py renderer_stats`."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from mangagen.renderers import observed
from mangagen.renderers.base import ProviderState
from mangagen.renderers.models import RenderSample
from tests.support.remote_renders import finished

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def prior(settings):
    settings.RENDERER = "procedural"
    settings.RENDER_COLD_START_SECONDS = 20.0
    settings.RENDER_SECONDS = 2.0


def rendered(cold_start: float, render: float, *, model="flux", partial=False):
    return finished(cold_start, render, model=model, partial=partial)


def test_the_settings_speak_until_enough_renders_were_seen():
    for _ in range(observed.MIN_SAMPLES - 1):
        observed.record(rendered(4.0, 1.0))
    stats = observed.observed(renderer="replicate", model="flux")
    assert (stats.cold_start_seconds, stats.render_seconds) == (20.0, 2.0)
    observed.record(rendered(4.0, 1.0))
    stats = observed.observed(renderer="replicate", model="flux")
    assert (stats.cold_start_seconds, stats.render_seconds) == (4.0, 1.0)
    assert stats.samples == stats.cold_starts == observed.MIN_SAMPLES


def test_medians_of_cold_starts_that_were_whole_and_of_every_render():
    for cold, render in [(4.0, 1.0), (0.0, 1.2), (5.0, 0.8), (0.0, 1.1), (6.0, 0.9)]:
        observed.record(rendered(cold, render))
    observed.record(rendered(0.5, 1.0, partial=True))  # the end of someone else's boot
    stats = observed.observed(renderer="replicate", model="flux")
    assert stats.cold_start_seconds == 5.0  # of 4, 5, 6: warm and partial ones left out
    assert stats.render_seconds == 1.0
    assert (stats.samples, stats.cold_starts) == (6, 3)


def test_kept_per_renderer_and_model():
    for _ in range(3):
        observed.record(rendered(9.0, 3.0, model="flux-dev"))
        observed.record(rendered(2.0, 0.5, model="flux-schnell"))
    assert observed.observed(renderer="replicate", model="flux-dev").cold_start_seconds == 9.0
    assert observed.observed(renderer="replicate", model="flux-schnell").render_seconds == 0.5


def test_only_the_newest_window_is_kept(monkeypatch):
    monkeypatch.setattr(observed, "WINDOW", 5)
    for render in range(1, 9):
        observed.record(rendered(0.0, float(render)))
    kept = RenderSample.objects.order_by("id").values_list("render", flat=True)
    assert list(kept) == [4.0, 5.0, 6.0, 7.0, 8.0]


def test_what_cancelling_saved_is_the_rest_of_the_boot_and_the_render():
    stats = observed.ProviderStats("replicate", "flux", 10.0, 2.0, 9, 9, 0.0)
    booting = {"queued": 0.0, "cold_start": 3.0, "render": 0.0}
    assert observed.saved_seconds(stats, state=ProviderState.BOOTING, phases=booting) == 9.0
    drawing = {"queued": 0.0, "cold_start": 10.0, "render": 0.5}
    assert observed.saved_seconds(stats, state=ProviderState.RENDERING, phases=drawing) == 1.5
    queued = {"queued": 4.0, "cold_start": 0.0, "render": 0.0}
    assert observed.saved_seconds(stats, state=ProviderState.QUEUED, phases=queued) == 2.0


def test_renderer_stats_prints_one_json_line(settings):
    settings.RENDERER = "replicate"
    settings.REPLICATE_API_TOKEN = "r8_test"
    settings.REPLICATE_MODEL = "black-forest-labs/flux-schnell"
    for cold in (3.0, 4.0, 5.0):
        observed.record(rendered(cold, 1.5, model="black-forest-labs/flux-schnell"))
    out = io.StringIO()
    call_command("renderer_stats", stdout=out)
    [line] = out.getvalue().splitlines()
    stats = json.loads(line)
    assert {"renderer", "model", "cold_start_seconds", "render_seconds", "samples"} <= set(stats)
    assert stats["renderer"] == "replicate"
    assert stats["model"] == "black-forest-labs/flux-schnell"
    assert (stats["cold_start_seconds"], stats["render_seconds"], stats["samples"]) == (4.0, 1.5, 3)


def test_the_procedural_renderer_reports_its_phases_too(settings, tmp_path):
    from mangagen.renderers.gpu_pool import GpuPool
    from mangagen.renderers.providers.procedural import ProceduralRenderer
    from tests.support.remote_renders import spec

    renderer = ProceduralRenderer(
        width=80, height=60, pool=GpuPool(), cold_start_seconds=0.3, render_seconds=0.1
    )
    cold = renderer.render(spec(), 1).metadata
    assert cold["phases"]["cold_start"] >= 0.25 and cold["phases"]["render"] >= 0.1
    assert (cold["provider"], cold["model"], cold["partial_boot"]) == (
        "procedural",
        "simulated",
        False,
    )
    warm = renderer.render(spec(), 2).metadata["phases"]
    assert warm["cold_start"] == 0.0
