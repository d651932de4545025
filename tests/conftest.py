"""Shared fixtures."""
import os
import sys

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


def spark_missing():
    """Why a local Spark session cannot start here (pyspark or Java missing), or None."""
    import importlib.util
    import shutil
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed"
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (
            java_home and os.path.exists(os.path.join(java_home, "bin", "java"))):
        return "no Java runtime (java) for Spark"
    return None


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local Spark session for the whole run (starting one takes ~15 s): 2 cores, a task
    retried once after a failure (local[2,2]: local mode does not retry otherwise), the
    driver on the loopback address. Skipped where pyspark or Java is missing, unless
    FASTML_REQUIRE_SPARK=1 (the CI's Spark stage), where that is a failure. The Python
    workers get this fastml and the tests folder on their path, and start in an empty
    folder: they run `python -m pyspark.daemon` in the JVM's working directory, which `-m`
    puts first on their path, so from a source checkout they would import its uncompiled
    fastml/ instead of the installed one."""
    missing = spark_missing()
    if missing:
        if os.environ.get("FASTML_REQUIRE_SPARK") == "1":
            pytest.fail(f"FASTML_REQUIRE_SPARK=1 but {missing}")
        pytest.skip(missing)
    import fastml
    paths = [os.path.dirname(os.path.dirname(os.path.abspath(fastml.__file__))),
             os.path.dirname(os.path.abspath(__file__))]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        paths + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    # the workers run this interpreter (Spark's default is whichever python3 is on PATH)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("spark-workers"))   # the JVM's working directory
    try:
        session = (SparkSession.builder.master("local[2,2]").appName("fastml-tests")
                   .config("spark.ui.enabled", "false")
                   .config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.sql.shuffle.partitions", "4")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                   .getOrCreate())
    finally:
        os.chdir(here)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
