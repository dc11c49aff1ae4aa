"""Roughs: a fast, free draft of each panel for its current art hash, drawn by the
provider's draft model, so the person sees the whole comic laid out and lettered (the
*name* a manga artist draws before inking) before paying for a single final.

- models.py: a `Rough` row per draw (the newest for an art hash is the panel's rough),
  its picture under the comic's own folder (`roughs/<storyboard>/`);
- services.py: asking for roughs (every panel without one, or one panel with another
  seed), gated before any spend: a person with a credit only, within the day's budget
  (budget.py); never a credit moved, never a hold;
- kinds.py: the rough as a render kind (price 0, the GPU pool's lowest queue, the
  provider's `rough` verb), run by the one worker path (tasks.py);
- selectors.py: the roughs of a comic as the API shows them, and the ready rough a
  final is drawn from (mangagen/jobs/attempts.py);
- push.py: each rough pushed to the comic's open pages as it is ready (the
  `/ws/storyboards/<id>/` stream, mangagen/web/);
- retention.py: what the daily prune lets go of.
"""
