"""What the provider adapters' tests share: panels to render, pictures, and a render
run in a thread of its own (so the test can withdraw it meanwhile)."""

from __future__ import annotations

import io
import threading
import uuid

from PIL import Image

from mangagen.renderers import CharacterSpec, PanelSpec, RenderResult

AIKO = CharacterSpec("Aiko", "long black hair", position="left")
KENJI = CharacterSpec("Kenji", "glasses", position="right", outfit="a raincoat")


def spec(*characters, **extra) -> PanelSpec:
    return PanelSpec(
        style="manga",
        description="A rooftop in the rain.",
        shot="wide",
        characters=characters or (AIKO, KENJI),
        art_hash=uuid.uuid4().hex,
        **extra,
    )


def png(size=(64, 64), shade=90) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (shade, shade, shade)).save(buffer, format="PNG")
    return buffer.getvalue()


def with_sheet(character: CharacterSpec, shade: int = 90) -> CharacterSpec:
    """The character with a reference sheet of their own."""
    return CharacterSpec(
        character.name,
        character.description,
        sheet=f"{shade:064d}",
        reference=png(shade=shade),
        position=character.position,
        outfit=character.outfit,
    )


def quick(settings, renderer: str, **provider) -> None:
    """Settings for a provider's tests: `renderer` with its settings `provider`, polled
    often, with short timeouts and backoffs, and no extra picture hosts."""
    settings.RENDERER = renderer
    settings.RENDER_POLL_SECONDS = 0.05
    settings.RENDER_HTTP_TIMEOUT_SECONDS = 60 if renderer == "a1111" else 5
    settings.RENDER_HTTP_RETRIES = 2
    settings.RENDER_HTTP_BACKOFF_SECONDS = 0.05
    settings.RENDER_IMAGE_HOSTS = []
    for name, value in provider.items():
        setattr(settings, name, value)


def ticket() -> str:
    return f"test:{uuid.uuid4()}"


def render_in_thread(renderer, panel, name, **kwargs) -> dict:
    """Starts a render in a thread; the dict gets `result` or `error`, and `thread`."""
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = renderer.render(panel, 7, ticket=name, **kwargs)
        except BaseException as exc:
            outcome["error"] = exc

    outcome["thread"] = threading.Thread(target=run, daemon=True)
    outcome["thread"].start()
    return outcome


# What each provider's tests set beyond its stand-in's URL (`<RENDERER>_BASE_URL`): no
# password, the shipped workflows and inputs, sheets through IP-Adapter (AUTOMATIC1111),
# endpoint abc123 (RunPod), FLUX schnell (Replicate).
PROVIDERS = {
    "a1111": {
        "A1111_AUTH": "",
        "A1111_PAYLOAD": None,
        "A1111_REFERENCE_MODULE": "ip-adapter_clip_h",
        "A1111_REFERENCE_MODEL": "ip-adapter-plus_sdxl_vit-h",
    },
    "comfyui": {"COMFYUI_WORKFLOW": "", "COMFYUI_REFERENCE_WORKFLOW": ""},
    "runpod": {"RUNPOD_API_KEY": "rp_test", "RUNPOD_ENDPOINT_ID": "abc123", "RUNPOD_INPUT": None},
    "replicate": {
        "REPLICATE_API_TOKEN": "r8_test",
        "REPLICATE_MODEL": "black-forest-labs/flux-schnell",
        "REPLICATE_INPUT": None,
    },
}


def provider_settings(settings, renderer: str, standin, **extra) -> None:
    """Settings for `renderer` against `standin` (`quick`): its PROVIDERS defaults, then
    `extra`."""
    at = {f"{renderer.upper()}_BASE_URL": standin.url}
    quick(settings, renderer, **at | PROVIDERS[renderer] | extra)


def finished(
    cold_start: float,
    render: float,
    *,
    provider: str = "replicate",
    model: str = "flux",
    partial: bool = False,
) -> RenderResult:
    """A render's result as a renderer reports its phases (the picture left out)."""
    phases = {"queued": 0.1, "cold_start": cold_start, "render": render}
    return RenderResult(
        image=b"",
        content_type="image/png",
        width=1,
        height=1,
        renderer=provider,
        seconds=cold_start + render,
        cold=cold_start > 0,
        metadata={"phases": phases, "provider": provider, "model": model, "partial_boot": partial},
    )
