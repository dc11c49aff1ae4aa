"""The offline renderer: draws a real manga-style panel with Pillow.

A background chosen from the shot (screentone sky and skyline,
focus lines, speed lines); a figure for each character present, whose look
(hair, eyes, accessories) follows from their name and description (or,
once they have a reference sheet, from the sheet) so the same character looks
the same in every panel. Art only: no text is painted
(the lettering layer, mangagen.lettering, draws balloons and captions over
it), and the dialogue and caption do not change a pixel. Where it drew each
face is reported in the result's metadata (`faces`), so balloons can avoid
them and point their tails at the speaker. Same spec and seed give the same
bytes.

It also simulates a GPU provider: a cold start after `RENDER_IDLE_SECONDS`
of quiet (shared by all workers through Redis) and `RENDER_SECONDS` a render.

By what it draws: `figures` (a character's look, figures and faces), `outfits`,
`backdrops` (the shot's backgrounds and a place's own motif), on one `surface`;
`renderer` puts them on a canvas (a panel's or a reference sheet's) and is the renderer.
"""

from ...base import Verb
from ...catalog import RendererName
from ...registry import register
from .backdrops import Backdrop
from .figures import Look
from .outfits import Outfit
from .renderer import Canvas, ProceduralRenderer, SheetCanvas

__all__ = ["Backdrop", "Canvas", "Look", "Outfit", "ProceduralRenderer", "SheetCanvas", "build"]


def build() -> ProceduralRenderer:
    """The offline renderer, its simulated GPU's timings the settings'."""
    return ProceduralRenderer()


register(RendererName.PROCEDURAL, verbs=Verb, build=build)
