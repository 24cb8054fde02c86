"""The controller view's questions asked in one job (silver_build.controller_view, frames.one_row): with no
controller data the mode is ``none`` and the cluster id is the one most log dirs name, the smallest on a tie."""
from __future__ import annotations

import pytest

from jobs.reconcile.frames import conform_all
from jobs.reconcile.silver_build import controller_view
from jobs.tables import bronze
from tests.settings_from import settings_from
from tests.table_rows import frame

pytestmark = pytest.mark.spark


def _view(spark, cluster_ids, meta_version=1):
    dirs = [{"log_dir": f"/d{i}", "broker_id": i, "cluster_id": c, "meta_version": meta_version}
            for i, c in enumerate(cluster_ids)]
    b = conform_all(spark, {"bronze_log_dirs": frame(spark, "bronze_log_dirs", dirs)}, bronze.TABLES)
    return controller_view(spark, b, settings_from().catalogue.thresholds)


@pytest.mark.parametrize("ids, expected", [
    (["B", "A", "B", "A", "C", None, None, None], "A"),  # two each: the smallest; nulls name none
    (["C", "B", "C"], "C"),
    ([None], None),
    ([], None),
])
def test_without_controller_data_the_cluster_is_the_one_most_log_dirs_name(spark, ids, expected):
    view = _view(spark, ids)
    assert (view.mode, view.cluster_id) == ("none", expected)


def test_zookeeper_era_log_dirs_alone_do_not_make_a_migration(spark):
    """meta.properties version 0 says ZooKeeper wrote the dir; without a KRaft log there is nothing to migrate to."""
    assert _view(spark, ["Z"], meta_version=0).mode == "none"
