"""Stories, characters, storyboards and panels: what a person writes and edits."""
