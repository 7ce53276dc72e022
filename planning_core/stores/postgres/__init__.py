"""The PostgreSQL store: the same plans in a database, shared by servers on many hosts
(`--store postgresql://user@host/db`)."""

from .store import PostgresStore

__all__ = ["PostgresStore"]
