"""Pages: kept panels composed into manga pages or a webtoon strip, and exported.

`layout` decides which panels go on which page and where (pure, no images);
`compose` draws pages with their lettering; `builds` caches what was drawn
per content; `exports` packs pages as PDF, CBZ or a tall PNG.
"""
