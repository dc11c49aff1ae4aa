"""Render kinds: every render the studio draws is of a kind, and a kind is one declaration.

A kind (kind.py `RenderKind`) says what one render of it costs the person (`credits`:
held before any GPU work, captured when its picture is shown, 0 for a kind never held),
where it waits in the GPU pool (`priority`), what the provider is asked to do (`verb`),
how its request is built (`prepare`) and what happens when its picture arrives
(`finish`, `check`, `keep`). One worker path runs every kind (worker.py: prepare → draw
→ keep) and one exception policy ends every render task (failures.py).

The kinds: a panel, a redo, a touch-up and the judge's redraw (mangagen/jobs/kinds/), a
character sheet (mangagen/characters/kinds.py). docs/architecture.md has the table and
the recipe for adding one.
"""
