"""The ComfyUI workflows Mangagen ships (API format, with placeholders), used by the
`comfyui` renderer and, inside worker-comfyui's input, by the `runpod` one.

- `sdxl_txt2img.json`: SDXL base, core nodes only. The panel's prompt, and each of up
  to three characters' words conditioned on their box (ConditioningSetArea): the
  third of the frame the blocking puts them in.
- `sdxl_ip_adapter.json`: the same, plus up to two reference pictures through
  ComfyUI_IPAdapter_plus (IPAdapterUnifiedLoader, IPAdapterAdvanced), each masked to
  the box of whom it shows (SolidMask, MaskComposite).
- `sdxl_inpaint.json`: a touch-up, core nodes only: the SDXL inpainting checkpoint
  (`sd_xl_base_1.0_inpainting_0.1.safetensors`), the picture through LoadImage
  (`{{image}}`), the region through LoadImageMask's red channel (`{{mask}}`: a
  greyscale PNG, white = redraw), VAEEncodeForInpaint, KSampler at denoise 1.
  `COMFYUI_INPAINT_WORKFLOW` replaces it; it must name `{{image}}` and `{{mask}}`.
- `sdxl_turbo_rough.json`: a rough, core nodes only: SDXL Turbo
  (`sd_xl_turbo_1.0_fp16.safetensors`), one step at CFG 1 (what Turbo is distilled
  for), at the rough's size. `COMFYUI_ROUGH_WORKFLOW` replaces it.
- `sdxl_from_rough.json`: a final from its rough, core nodes only: SDXL base, the rough
  through LoadImage (`{{rough}}`) and VAEEncode, KSampler at denoise 0.55 (the rough's
  composition stays, the drawing is the final's). `COMFYUI_FROM_ROUGH_WORKFLOW`
  replaces it; it must name `{{rough}}`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ..templates import check, placeholders_in

HERE = Path(__file__).resolve().parent
TXT2IMG = "sdxl_txt2img.json"
REFERENCES = "sdxl_ip_adapter.json"
INPAINT = "sdxl_inpaint.json"
ROUGH = "sdxl_turbo_rough.json"
FROM_ROUGH = "sdxl_from_rough.json"


def shipped_path(name: str) -> str:
    """Where one of the workflows shipped here is, by file name."""
    return str(HERE / name)


def shipped(name: str) -> dict:
    """One of the workflows shipped here, by file name."""
    return load(shipped_path(name))


@cache
def load(path: str) -> dict:
    """A workflow file, checked. Raises ValueError saying what is wrong with it."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ValueError(f"Cannot read the workflow {path}: {exc}") from exc
    try:
        workflow = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"The workflow {path} is not valid JSON: {exc}") from exc
    return check(workflow, what=f"The workflow {path}")


def checkpoint_of(workflow: dict) -> str:
    """The checkpoint a workflow loads (what its renders' timings are learned under)."""
    for node in workflow.values():
        if isinstance(node, dict) and "ckpt_name" in node.get("inputs", {}):
            return str(node["inputs"]["ckpt_name"])
    return ""


def load_inpaint(path: str) -> dict:
    """An inpaint workflow file, checked: it must load the picture and the mask it is
    given (`{{image}}` and `{{mask}}`). Raises ValueError saying what is wrong."""
    workflow = load(path)
    missing = sorted({"image", "mask"} - placeholders_in(workflow))
    if missing:
        names = " and ".join("{{" + m + "}}" for m in missing)
        raise ValueError(
            f"The inpaint workflow {path} does not name {names}: a touch-up's picture and "
            "mask go there (the uploaded files' names, for LoadImage and LoadImageMask)."
        )
    return workflow


def load_from_rough(path: str) -> dict:
    """A from-rough workflow file, checked: it must load the rough it is given
    (`{{rough}}`). Raises ValueError saying what is wrong."""
    workflow = load(path)
    if "rough" not in placeholders_in(workflow):
        raise ValueError(
            f"The from-rough workflow {path} does not name {{{{rough}}}}: a final's rough goes "
            "there (the uploaded file's name, for LoadImage)."
        )
    return workflow
