"""The studio's shared kernel: what every area of it uses and that imports none of them.

Errors and their codes, media storage, the queues and the broker, the chat client,
the per-person quotas and drawing budget, the paid-render rule (one hold per
render), the render retry rule, the credit history's wording, and the faults a
worker may pass along. Nothing here imports a feature, a view or the comic's models.
"""
