"""The documentation site's generated reference pages (docs/reference/), one module per page.

Each module imports the code its page describes and renders it as Markdown at build time
(devtools/docs_hooks.py puts the text in place of the page's marker), so a setting, a Redis key
or an archive column added to the code is in the manual with no one copying it there, and one
removed leaves it the same way."""
