"""Shared fixtures."""
import pytest


@pytest.fixture(scope="session")
def dask_client(tmp_path_factory):
    """One dask.distributed LocalCluster (2 worker processes, 1 thread each) for the whole
    test run, with its spill directory under pytest's temporary directory."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        local_directory=str(tmp_path_factory.mktemp("dask-workers")))
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
