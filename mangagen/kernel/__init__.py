"""The studio's shared kernel: what every area of it uses, below them all.

Errors and their codes, media storage, the queues and the broker, the chat client,
the per-person quotas and drawing budget, the paid-render rule (one hold per render,
of its kind's price), the words for a failed render, the render retry rule, the
credit history's wording, and the faults a worker may pass along. It imports the
ledger (a paid render's hold, the credit history's journal) and nothing of the
studio above it: no feature, view, renderer or comic model.
"""
