"""Which fabrics a database holds rows of: a command naming a fabric that has none (a typo, another database) is
told so, instead of being shown an empty, healthy system."""

from __future__ import annotations

import sqlalchemy as sa

from fabric.store._base import OpsBase
from fabric.store._scopes import DRY_RUN_SUFFIX
from fabric.store.schema import METADATA


def _scoped_tables() -> list[sa.Table]:
    """Every table whose rows belong to a fabric (all of them but the schema's version)."""
    return [table for table in METADATA.sorted_tables if "fabric" in table.c]


class FabricOps(OpsBase):
    def holds_fabric(self) -> bool:
        """Whether any table has a row of this fabric (or of its dry run): its daemon has run, or someone wrote
        to it. One indexed lookup a table, stopping at the first row found."""
        names = [self.fabric, self.fabric + DRY_RUN_SUFFIX]
        with self._read() as conn:
            return any(conn.execute(sa.select(sa.literal(1)).select_from(table).where(table.c.fabric.in_(names))
                                    .limit(1)).first() is not None for table in _scoped_tables())

    def fabrics(self) -> list[str]:
        """The names of the fabrics with rows in this database, sorted (a dry run's rows count as its fabric's)."""
        query = sa.union(*(sa.select(table.c.fabric).distinct() for table in _scoped_tables()))
        with self._read() as conn:
            return sorted({str(name).removesuffix(DRY_RUN_SUFFIX) for name in conn.scalars(query)})
