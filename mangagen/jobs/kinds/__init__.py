"""The jobs' render kinds, one declaration each (mangagen/render_kinds/kind.py says
what a kind declares):

- panel.py: a panel drawn for Generate (and its look-ahead), and a redo of one;
- touchup.py: a region of a panel's kept picture drawn again;
- judge_redraw.py: a render drawn again because the judge scored it low.

A panel, a redo and a touch-up are render attempts of a job's panel (attempts.py: how
such an attempt is prepared, drawn and kept); which one an attempt is, the worker
reads from it (rendering.py `attempt_kind`).
"""
