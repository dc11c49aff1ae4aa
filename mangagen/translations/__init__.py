"""Translations: a comic's lettering in other languages, over the same art.

A render is art only, so a translation is only lettering: the title and each
panel's dialogue lines and caption, kept with the original text each line
translates so that an edit of the original keeps the translated line and
flags it stale. A line not translated is lettered in the original. Pages,
the reader and every export take a language; a translation never renders,
holds or spends a credit, and never changes an art hash.

`matching` pairs stored lines with the original as it is now (pure);
`selectors` reads translations and the lettering of a language; `services`
writes them (a person's edits, a chat model's draft through `chat`).
"""
