"""Render jobs: the state machine, per-render charging, and the live event log."""
