"""The command palette: fuzzy search over everything the window can do, Enter runs it."""
