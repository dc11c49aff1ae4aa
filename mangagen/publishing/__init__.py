"""Reading links: a comic or a whole series published as a snapshot anyone can read.

`services` publishes (draws every page of every language once, into storage,
under a folder of the version) and stops sharing; `selectors` finds a link by
its token and says what the public reader shows; `api` is the owner's
publish / stop sharing; `views` the public reader and its page images, which
only ever read the snapshot's files (never draw on a reader's request).
"""
