"""The renderers `RENDERER` may name (Django-free: the settings check it while they load)."""

from enum import StrEnum


class RendererName(StrEnum):
    PROCEDURAL = "procedural"  # offline; simulates a serverless GPU
    OPENAI = "openai"  # any OpenAI-compatible images endpoint (LocalAI, sd.cpp, OpenAI)
    REPLICATE = "replicate"
    RUNPOD = "runpod"  # RunPod serverless (worker-comfyui by default)
    COMFYUI = "comfyui"
    A1111 = "a1111"  # AUTOMATIC1111 / Forge


class ImagesServer(StrEnum):
    """What serves the `openai` renderer's endpoint (`IMAGES_SERVER`): how it takes
    reference pictures."""

    OPENAI = "openai"  # multipart `image[]` on IMAGES_REFERENCE_ENDPOINT (edits)
    LOCALAI = "localai"  # `ref_images` (raw base64) on generations: LocalAI has no edits
    SDCPP = "sdcpp"  # stable-diffusion.cpp: `ref_images` in `sd_cpp_extra_args`, never edits


def refuse_unknown(setting: str, value: str, accepted: type[StrEnum]) -> str | None:
    """A sentence refusing `value` for `setting`, naming what it accepts (None if accepted)."""
    names = [str(n) for n in accepted]
    if value in names:
        return None
    return f"{setting}={value!r} is not one of: {', '.join(names)}."
