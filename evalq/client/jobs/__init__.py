"""Jobs as people name and list them: finding one by id, id prefix or --name (lookup), and
the lines of a list (listing)."""
