"""The archive's schema reference (docs/reference/archive-schema.md), rendered from the
SQLAlchemy metadata and Alembic's script directory: tables, columns, keys, indexes and the
revisions that build them, for those who query the archive with SQL."""

from __future__ import annotations

from sqlalchemy import Column, Table

from devtools.reference.markdown_cells import cell, table
from evalq.worker.archive import schema
from evalq.worker.archive.engine import VERSION_TABLE, alembic_config, head_revision


def column_keys(column: Column[object]) -> str:
    marks = ["primary key"] if column.primary_key else []
    marks += [f"→ `{fk.target_fullname}`" for fk in column.foreign_keys]
    return ", ".join(marks)


def table_section(sql_table: Table) -> str:
    header = ("column", "type", "null", "key")
    rows = [
        (f"`{c.name}`", f"`{c.type}`", "yes" if c.nullable else "no", column_keys(c))
        for c in sql_table.columns
    ]
    parts = [f"## `{sql_table.name}`\n", table(header, rows)]
    indexes = sorted(sql_table.indexes, key=lambda index: str(index.name))
    if indexes:
        parts.append(
            "Indexes: "
            + ", ".join(
                f"`{index.name}` ({', '.join(c.name for c in index.columns)})" for index in indexes
            )
            + ".\n"
        )
    return "\n".join(parts)


def revisions() -> str:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    rows = [
        (
            f"`{rev.revision}`",
            f"`{rev.down_revision}`" if rev.down_revision else "none",
            cell(rev.doc or ""),
        )
        for rev in script.walk_revisions()
    ]
    return table(("revision", "follows", "what it does"), rows)


def markdown() -> str:
    intro = (
        f"Alembic head revision: **`{head_revision()}`** (recorded in the archive's "
        f"`{VERSION_TABLE}` table).\n\n"
        f"Tables: {', '.join(f'`{name}`' for name in schema.metadata.tables)}.\n"
    )
    sections = [table_section(t) for t in schema.metadata.sorted_tables]
    return "\n".join([intro, *sections, "## Revisions\n", revisions()])
