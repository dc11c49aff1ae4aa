"""The layout engine: which panels go on which page, in which tiers, and where.

Pure: panels in (index and shot), pages out, with each panel's rectangle as
fractions of the page. Print conventions: B5 trim, outer margins, wider
gutters between tiers than between the panels of a tier; the first panel of
a tier sits on the side reading starts from (right for right-to-left).

Templates by shot (`auto`): an establishing or wide shot takes a whole tier,
mediums pair up, close-ups go up to three a tier, and an action shot in a
comic of four or more panels gets a splash page (a dramatic beat). A page
holds as many tiers as fit its height. A person may move the page breaks
(`breaks`: the panel indices that start a page) and pick a template per page
(`templates`: keyed by the page's first panel index, so a pick follows its
page when breaks move).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mangagen.storyboards.models import PageTemplate, ReadingDirection

PAGE_MM = (182.0, 257.0)  # JIS B5, the size of manga magazines
MARGIN_MM = 12.0
TIER_GUTTER_MM = 6.0
PANEL_GUTTER_MM = 3.0
PAGE_CAPACITY = 3.6  # tier weights a page holds
MAX_TIERS = 4
MAX_PANELS_PER_PAGE = 8

WIDE_SHOTS = ("establishing", "wide")
SMALL_SHOTS = ("close-up", "extreme-close-up")
TIER_WEIGHT = {"establishing": 1.2, "wide": 1.1, "action": 1.3, "medium": 1.0}
PANEL_WEIGHT = {"establishing": 1.4, "wide": 1.3, "action": 1.2, "medium": 1.0}


@dataclass(frozen=True)
class LayoutPanel:
    index: int
    shot: str


@dataclass
class Page:
    number: int
    panels: list[int]
    template: str
    rects: dict[int, tuple[float, float, float, float]] = field(default_factory=dict)


def paginate(
    panels: list[LayoutPanel],
    *,
    direction: str = ReadingDirection.RTL,
    breaks: list[int] | None = None,
    templates: dict[str, str] | None = None,
) -> list[Page]:
    """The panels set on pages; every panel appears once, in order."""
    if not panels:
        return []
    templates = templates or {}
    groups = _groups_by_breaks(panels, breaks) if breaks else _auto_groups(panels)
    pages = []
    for number, group in enumerate(groups, start=1):
        template = templates.get(str(group[0].index), PageTemplate.AUTO)
        if template not in PageTemplate.values:
            template = PageTemplate.AUTO
        if template == PageTemplate.AUTO and len(group) == 1 and group[0].shot == "action":
            template = PageTemplate.SPLASH
        page = Page(number=number, panels=[p.index for p in group], template=template)
        page.rects = _place(_tiers(group, template), direction=direction)
        pages.append(page)
    return pages


def page_starts(pages: list[Page]) -> list[int]:
    """The breaks as a person would save them: the first panel index of each page."""
    return [page.panels[0] for page in pages]


# --- which panels share a page --------------------------------------------------------------


def _auto_groups(panels: list[LayoutPanel]) -> list[list[LayoutPanel]]:
    splash = len(panels) >= 4
    groups: list[list[LayoutPanel]] = []
    current: list[LayoutPanel] = []
    for panel in panels:
        if splash and panel.shot == "action":
            if current:
                groups.append(current)
            groups.append([panel])
            current = []
            continue
        trial = [*current, panel]
        tiers = _tiers(trial, PageTemplate.AUTO)
        weight = sum(_tier_weight(t) for t in tiers)
        if current and (
            weight > PAGE_CAPACITY or len(tiers) > MAX_TIERS or len(trial) > MAX_PANELS_PER_PAGE
        ):
            groups.append(current)
            current = [panel]
        else:
            current = trial
    if current:
        groups.append(current)
    return groups


def _groups_by_breaks(panels: list[LayoutPanel], breaks: list[int]) -> list[list[LayoutPanel]]:
    starts = set(breaks) | {panels[0].index}
    groups: list[list[LayoutPanel]] = []
    for panel in panels:
        if panel.index in starts or len(groups[-1]) >= MAX_PANELS_PER_PAGE:
            groups.append([])
        groups[-1].append(panel)
    return groups


# --- tiers within a page ---------------------------------------------------------------------


def _tiers(group: list[LayoutPanel], template: str) -> list[list[LayoutPanel]]:
    if template == PageTemplate.TIERS:
        return [[p] for p in group]
    if template == PageTemplate.PAIRS:
        return [group[i : i + 2] for i in range(0, len(group), 2)]
    if template == PageTemplate.GRID:
        return [group[i : i + 3] for i in range(0, len(group), 3)]
    if template == PageTemplate.WIDE_TOP:
        rest = group[1:]
        return [group[:1]] + [rest[i : i + 2] for i in range(0, len(rest), 2)]
    if template == PageTemplate.SPLASH:
        rest = group[1:]
        return [group[:1]] + ([rest[i : i + 3] for i in range(0, len(rest), 3)] if rest else [])
    tiers: list[list[LayoutPanel]] = []
    for panel in group:  # auto: by shot
        last = tiers[-1] if tiers else None
        alone = panel.shot in WIDE_SHOTS or panel.shot == "action"
        if last is None or alone or last[0].shot in WIDE_SHOTS or last[0].shot == "action":
            tiers.append([panel])
            continue
        all_small = panel.shot in SMALL_SHOTS and all(p.shot in SMALL_SHOTS for p in last)
        if len(last) < (3 if all_small else 2):
            last.append(panel)
        else:
            tiers.append([panel])
    return tiers


def _tier_weight(tier: list[LayoutPanel]) -> float:
    if len(tier) == 1:
        return TIER_WEIGHT.get(tier[0].shot, 1.0)
    if all(p.shot in SMALL_SHOTS for p in tier):
        return 0.8
    return 1.0


def _place(tiers: list[list[LayoutPanel]], *, direction: str) -> dict:
    """Rectangles (x0, y0, x1, y1) as fractions of the page, inside the margins."""
    width, height = PAGE_MM
    inner_w, inner_h = width - 2 * MARGIN_MM, height - 2 * MARGIN_MM
    weights = [_tier_weight(t) for t in tiers]
    if len(tiers) > 1 and len(tiers[0]) == 1 and tiers[0][0].shot == "action":
        weights[0] = sum(weights[1:]) * 2.2  # a splash: the beat takes most of the page
    free_h = inner_h - TIER_GUTTER_MM * (len(tiers) - 1)
    rects = {}
    y = MARGIN_MM
    for tier, weight in zip(tiers, weights, strict=True):
        tier_h = free_h * weight / sum(weights)
        panel_weights = [PANEL_WEIGHT.get(p.shot, 0.85) for p in tier]
        free_w = inner_w - PANEL_GUTTER_MM * (len(tier) - 1)
        x = MARGIN_MM
        ordered = list(zip(tier, panel_weights, strict=True))
        if direction == ReadingDirection.RTL:
            ordered.reverse()  # reading starts on the right
        for panel, panel_weight in ordered:
            panel_w = free_w * panel_weight / sum(panel_weights)
            rects[panel.index] = (
                x / width,
                y / height,
                (x + panel_w) / width,
                (y + tier_h) / height,
            )
            x += panel_w + PANEL_GUTTER_MM
        y += tier_h + TIER_GUTTER_MM
    return rects
