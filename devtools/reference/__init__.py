"""The documentation site's generated reference pages (docs/reference/), one module per page,
each rendering the code its page describes as Markdown at build time, so the manual follows
the code with no one copying it there."""
