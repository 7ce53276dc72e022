"""The database schema, versioned, created and migrated by the server itself.

Every table name starts with `planning_`, so the store can share a database with others.
Migration runs under a transaction-level advisory lock: when ten servers start at once on
an empty database, one creates the tables and the others wait for it, then find the
version current and do nothing. A server finding a newer version than it knows refuses
(DatabaseSchemaNewer) rather than write rows it does not understand.

Tasks are kept as the exact JSON document text the file store writes (`text`, not `jsonb`:
jsonb reorders keys and drops duplicates, and a copy files -> database -> files must give
the same bytes; `text`, not `json`, so that a damaged document copied from a damaged file
is kept as it is and reported unreadable, as the file store reports it).
"""

from __future__ import annotations

import psycopg

from ...errors import DatabaseSchemaNewer

PLANS = "planning_plans"
TASKS = "planning_tasks"
SESSIONS = "planning_sessions"
VERSIONS = "planning_schema"
HISTORY = "planning_history"
CHANNEL = "planning_changes"  # NOTIFY channel; the payload is a plan name

# pg_advisory_xact_lock key for migrations: any constant no other application uses
# (the bytes of "planmcp1" read as a big-endian integer).
MIGRATION_LOCK = int.from_bytes(b"planmcp1", "big") & 0x7FFF_FFFF_FFFF_FFFF

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            f"""CREATE TABLE {PLANS} (
                name text PRIMARY KEY,
                plan_md text NOT NULL,
                archived boolean NOT NULL DEFAULT false,
                archived_at timestamptz,
                high_water integer NOT NULL DEFAULT 0,  -- the highest id ever issued
                version bigint NOT NULL DEFAULT 1,      -- bumped by every write: PlanVersion's stamp
                created_at timestamptz NOT NULL DEFAULT now()
            )""",
            f"""CREATE TABLE {TASKS} (
                plan text NOT NULL REFERENCES {PLANS} (name),
                id integer NOT NULL,
                doc text NOT NULL,  -- Task.to_json(), byte for byte
                written_in bigint NOT NULL,  -- the plan's version that wrote it (plans.py)
                PRIMARY KEY (plan, id)
            )""",
            f"""CREATE TABLE {SESSIONS} (
                key text PRIMARY KEY,
                state text NOT NULL,  -- JSON
                updated_at timestamptz NOT NULL DEFAULT now()
            )""",
            f"CREATE INDEX {SESSIONS}_updated ON {SESSIONS} (updated_at)",
        ],
    ),
    (
        2,  # the plans' history (history.py); a database of version 1 gains it on start
        [
            f"""CREATE TABLE {HISTORY} (
                id bigserial PRIMARY KEY,
                plan text NOT NULL REFERENCES {PLANS} (name),
                entry bigint NOT NULL,  -- the write's plan version: one entry's events share it
                at text NOT NULL,       -- UTC, ISO 8601 with milliseconds: sorts as it reads
                by text NOT NULL,
                task integer,           -- NULL: an event of the plan
                event text NOT NULL     -- history.Event.to_dict() as JSON
            )""",
            f"CREATE INDEX {HISTORY}_plan ON {HISTORY} (plan, id)",
            f"CREATE INDEX {HISTORY}_task ON {HISTORY} (plan, task, id)",
            f"CREATE INDEX {HISTORY}_at ON {HISTORY} (at)",
        ],
    ),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def migrate(conn: psycopg.Connection[tuple[object, ...]], where: str) -> int:
    """Bring the schema to SCHEMA_VERSION (an autocommit connection); returns the version
    found before. Safe to run from any number of servers at once."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSIONS} (version integer PRIMARY KEY)")
        row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {VERSIONS}").fetchone()
        found = int(row[0]) if row else 0  # type: ignore[call-overload]
        if found > SCHEMA_VERSION:
            raise DatabaseSchemaNewer(where, found, SCHEMA_VERSION)
        for version, statements in MIGRATIONS:
            if version > found:
                for sql in statements:
                    conn.execute(sql)  # our own constant text
                conn.execute(f"INSERT INTO {VERSIONS} (version) VALUES (%s)", (version,))
    return found
