"""Character sheets: one reference image per character, used by every panel they are in."""
