"""On PostgreSQL, a role that may only read: opened to write, the store is refused at once naming the database and
why (the same refusal as a read-only SQLite file, ``tests/daemon/test_daemon_read_only_store.py``); opened to read,
it reads."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from store_helpers import pg_url
from support import pg_schema

from fabric.store import Store, StoreError
from fabric.store.engine import normalise_url


@pytest.mark.postgres
def test_a_role_that_may_only_read_is_refused_to_writers_and_reads() -> None:
    url = pg_url()
    role = f"reader_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(normalise_url(url))
    with pg_schema(url, "test_unwritable") as schema:
        Store.open(url, fabric="lab", schema=schema).close()
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
            conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            conn.exec_driver_sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        reader = normalise_url(url).set(username=role, password=None)
        try:
            for opening in (lambda: Store.open_existing(reader, fabric="lab", schema=schema, read_only=False),
                            lambda: Store.open(reader, fabric="lab", schema=schema)):
                with pytest.raises(StoreError, match=r"the database cannot be written \(permission denied"):
                    opening()
            with Store.open_existing(reader, fabric="lab", schema=schema) as store:
                assert store.silences() == []
        finally:
            with admin.begin() as conn:
                conn.exec_driver_sql(f"DROP OWNED BY {role}")
                conn.exec_driver_sql(f"DROP ROLE {role}")
            admin.dispose()
