"""Work that spans the studio's areas, above all of them: deleting a comic (its jobs,
sheets, places, pages, links and files) and pruning what grows forever."""
