"""The Spark pipeline on a real standalone cluster gives the same tables as in local mode.

Local mode runs Python tasks with the driver's own interpreter, where flinkstate is installed,
so it cannot show that the package reaches a cluster's executors. This test starts a master and
a worker with the launch classes that ship with pyspark, gives the executors a Python that
cannot see the editable install (only the zip that ``spark_session`` adds to the job), runs the
pipeline against the cluster in a subprocess (a process holds one Spark session, and this one
holds the embedded ``spark`` fixture) and compares every table with the local answer. The
explorer's search on Spark runs there too (``flinkstate explore --spark --master``): its
executors build the model from the zip and run it, and its answer is the single-process one.

The cluster authenticates every connection (``spark.authenticate`` with a secret of this run,
in the configuration its master, worker and driver read), and the driver is left to choose its
own address: flinkstate keeps it on 127.0.0.1 and removes its temporary folder at exit.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd
import pandas.testing as pdt
import pytest

from flinkstate.rescale.partitioner import Partitioner
from flinkstate.spark.rescaling import RescalingPipeline
from flinkstate.spark.tables import load

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
SAMPLES = ("keyed", "spanning-records")
TARGETS = [2, 3, 5]
KEY_GROUPS_TO = 3
STARTUP_TIMEOUT = 60.0
DRIVER_TIMEOUT = 240.0
STOP_GRACE = 10.0
SHUFFLE_PARTITIONS = 8
ANSWERS = "answers.json"
#: a checkpoint Flink 2.3.0 wrote (keyBy f0 % 1000 from 2 to 4 subtasks)
REAL_CHECKPOINT = (
    DATA / "real-checkpoints" / "keyed-hash-p2-p4" / "5d009e04dbf8e413889bc15e43e79d49" / "chk-48"
)

#: the subprocess's program: load this file as a module and run :func:`drive` on the cluster
_DRIVER = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("flinkstate_cluster_driver", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
module.drive(sys.argv[2], sys.argv[3])
"""

#: put first on an executor's PYTHONPATH: hides every flinkstate but the job's zip
_SITECUSTOMIZE = '''\
"""Make this Python an executor without flinkstate installed (written by test_cluster.py)."""
import os
import sys

sys.meta_path[:] = [
    finder
    for finder in sys.meta_path
    if not getattr(finder, "__module__", "").startswith("__editable___flinkstate")
]
sys.path[:] = [
    entry
    for entry in sys.path
    if not os.path.isfile(os.path.join(entry or os.getcwd(), "flinkstate", "__init__.py"))
]
'''


class Cluster(NamedTuple):
    master: str  # spark://127.0.0.1:port
    root: Path  # logs, work and local dirs, the executors' Python
    env: dict[str, str]  # for Spark processes: the worker, the driver subprocess
    python: Path  # the executors' Python: a wrapper without flinkstate


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return f"--- {path}: missing"
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    return f"--- {path} (last {len(text)} lines)\n" + "\n".join(text)


def _logs(root: Path) -> str:
    """The tail of every log under ``root``: master, worker, driver, executors."""
    logs = sorted((root / "logs").glob("*.log")) + sorted((root / "work").glob("*/*/std*"))
    return "\n".join(_tail(path) for path in logs)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process`` and what it started (its own process group), kill what is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_GRACE)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=STOP_GRACE)


def _executor_python(root: Path) -> Path:
    """A wrapper running this interpreter with a sitecustomize that hides flinkstate."""
    site = root / "executor-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    wrapper = root / "executor-python"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="{site}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
        "export PYTHONPATH\n"
        f'exec "{sys.executable}" "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return wrapper


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as answer:
            return int(json.load(answer).get("aliveworkers", 0))
    except (OSError, urllib.error.URLError, ValueError):
        return 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A standalone master and one worker (1 core, 1 GiB) on 127.0.0.1, stopped at the end."""
    if shutil.which("java") is None:
        pytest.skip("no 'java' on PATH: a Spark standalone master and worker need a JVM")
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    root = tmp_path_factory.mktemp("spark-cluster")
    for name in ("logs", "work", "local", "conf"):
        (root / name).mkdir()
    python = _executor_python(root)
    # spark_session leaves a cluster Spark's 200 shuffle partitions, 30 s of task overhead on
    # one core; still more than local mode's, so rows are partitioned differently there. The
    # master's REST submission server would take the fixed port 6066.
    # Nothing on the machine may use the cluster without the secret (the same for the master,
    # the worker, its executors and the driver: spark.authenticate on a standalone cluster).
    (root / "conf" / "spark-defaults.conf").write_text(
        f"spark.sql.shuffle.partitions {SHUFFLE_PARTITIONS}\nspark.master.rest.enabled false\n"
        f"spark.authenticate true\nspark.authenticate.secret {secrets.token_hex(16)}\n",
        encoding="utf-8",
    )
    (root / "conf" / "spark-defaults.conf").chmod(0o600)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("FLINKSTATE_SPARK_MASTER", "PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")
    }
    env.update(
        SPARK_HOME=str(spark_home),
        SPARK_CONF_DIR=str(root / "conf"),  # nothing from a spark-env.sh or defaults elsewhere
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(root / "logs"),
        SPARK_LOCAL_DIRS=str(root / "local"),
        PYSPARK_PYTHON=str(python),
    )
    port, master_ui, worker_ui = _free_ports(3)
    master = f"spark://127.0.0.1:{port}"
    commands = {
        "master": [
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(master_ui)),
        ],
        "worker": [
            "org.apache.spark.deploy.worker.Worker",
            master,
            *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
            *("--webui-port", str(worker_ui), "--work-dir", str(root / "work")),
        ],
    }
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for name, arguments in commands.items():
            with (root / "logs" / f"{name}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(
                        [str(spark_class), *arguments],
                        cwd=root,
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # its own process group, executors included
                    )
                )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while _alive_workers(master_ui) < 1:
            ended = [p.args for p in processes if p.poll() is not None]
            if ended or time.monotonic() > deadline:
                why = f"exited: {ended}" if ended else f"no worker after {STARTUP_TIMEOUT:.0f} s"
                pytest.fail(f"the Spark standalone cluster did not start ({why})\n{_logs(root)}")
            time.sleep(0.5)
        yield Cluster(master, root, env, python)
    finally:
        for process in reversed(processes):  # the worker first: it stops its executors
            _stop(process)


def keyed_exchanges(pipeline: RescalingPipeline, exchanges: tuple[str, ...]) -> list[str]:
    return [e for e in exchanges if pipeline.shape.exchange(e).partitioner is Partitioner.HASH]


def answers(spark: SparkSession) -> dict[str, pd.DataFrame]:
    """Every table of a sweep over both samples, and the key groups of each keyed exchange."""
    tables: dict[str, pd.DataFrame] = {}
    for sample in SAMPLES:
        pipeline = RescalingPipeline(load(spark, DATA / sample))
        try:
            result = pipeline.analyse(TARGETS, progress=False)
            tables[f"{sample} exchanges"] = pd.DataFrame({"exchange": list(result.exchanges)})
            tables[f"{sample} movement"] = result.movement
            tables[f"{sample} subtasks"] = result.subtasks
            tables[f"{sample} sweep"] = result.sweep
            tables[f"{sample} persisted"] = result.persisted
            for exchange in keyed_exchanges(pipeline, result.exchanges):
                key_groups = pipeline.key_groups(exchange, KEY_GROUPS_TO)
                tables[f"{sample} key_groups {exchange}"] = key_groups
        finally:
            pipeline.close()
    # a checkpoint Flink wrote, its channel-state files read by the executors themselves
    from flinkstate.flinkcheckpoint.export import ExchangeSpec
    from flinkstate.flinkcheckpoint.key_selector import key_function
    from flinkstate.spark.checkpoint_source import load_checkpoint

    record_type = "Tuple2<Long,String>"
    keyed = ExchangeSpec(Partitioner.HASH, key_function("f0%1000", record_type))
    dataset = load_checkpoint(
        spark, REAL_CHECKPOINT, {"to-record->slow-counter": keyed}, record_type
    )
    pipeline = RescalingPipeline(dataset)
    try:
        result = pipeline.analyse(TARGETS, progress=False)
        tables["flink checkpoint subtasks"] = result.subtasks
        tables["flink checkpoint persisted"] = result.persisted
    finally:
        pipeline.close()
    return tables


def drive(master: str, out: str) -> None:
    """The subprocess's side: what an executor imports (JSON in ``out``), and the tables (one
    Parquet file each beside it, dtypes kept)."""
    from flinkstate.spark.session import spark_session

    spark = spark_session(master)
    try:
        context = spark.sparkContext
        # built-ins only, so nothing of this module has to be pickled for the executor
        flinkstate = context.parallelize(["flinkstate"], 1).map(importlib.import_module)
        system = context.parallelize(["sys"], 1).map(importlib.import_module)
        conf = context.getConf()
        report: dict[str, Any] = {
            "master": context.master,
            "driver": [conf.get(key) for key in ("spark.driver.host", "spark.driver.bindAddress")],
            "authenticate": conf.get("spark.authenticate"),
            "executor_flinkstate": flinkstate.map(attrgetter("__file__"))
            .map(os.path.abspath)
            .collect(),
            "executor_meta_path": system.map(attrgetter("meta_path")).map(repr).collect(),
            "tables": {},
        }
        for index, (name, table) in enumerate(answers(spark).items()):
            file = Path(out).with_name(f"table-{index}.parquet")
            table.to_parquet(file)
            report["tables"][name] = file.name
    finally:
        spark.stop()
    Path(out).write_text(json.dumps(report), encoding="utf-8")


@contextlib.contextmanager
def driving(cluster: Cluster) -> Iterator[subprocess.Popen[bytes]]:
    """:func:`drive` in a subprocess working in a temporary directory, stopped at the end."""
    cwd = cluster.root / "driver"
    cwd.mkdir()
    (cluster.root / "driver-tmp").mkdir()
    # the driver's address is flinkstate's to choose; its temporary files go where we look
    env = {k: v for k, v in cluster.env.items() if k != "SPARK_LOCAL_IP"}
    env["TMPDIR"] = str(cluster.root / "driver-tmp")
    command = [sys.executable, "-c", _DRIVER, __file__, cluster.master, str(cwd / ANSWERS)]
    with (cluster.root / "logs" / "driver.log").open("wb") as output:
        driver = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield driver
    finally:
        _stop(driver)


def report_of(cluster: Cluster, driver: subprocess.Popen[bytes]) -> dict[str, Any]:
    """What :func:`drive` wrote, once it has ended; its tables read back from Parquet."""
    try:
        code: int | None = driver.wait(timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired:
        code = None
    out = cluster.root / "driver" / ANSWERS
    if code != 0 or not out.exists():
        status = "timed out" if code is None else f"exited with {code}"
        pytest.fail(f"the pipeline on {cluster.master} {status}\n{_logs(cluster.root)}")
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["tables"] = {
        name: pd.read_parquet(out.parent / file) for name, file in report["tables"].items()
    }
    return report


def test_pipeline_on_a_standalone_cluster_equals_local_mode(
    cluster: Cluster, spark: SparkSession
) -> None:
    hidden = subprocess.run(
        [str(cluster.python), "-c", "import flinkstate"],
        cwd=cluster.root,
        env=cluster.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert hidden.returncode != 0, "the executors' Python can import flinkstate without the zip"
    assert "No module named 'flinkstate'" in hidden.stderr, hidden.stderr

    with driving(cluster) as driver:
        local = answers(spark)  # meanwhile, in local mode: 2 cores serve both
        report = report_of(cluster, driver)

    assert report["master"] == cluster.master
    assert report["driver"] == ["127.0.0.1", "127.0.0.1"]  # not the machine's network address
    assert report["authenticate"] == "true"
    assert "flinkstate: note" not in (cluster.root / "logs" / "driver.log").read_text()
    assert list((cluster.root / "driver-tmp").iterdir()) == []  # the zip's folder removed
    assert report["executor_flinkstate"], "no executor answered"
    for path in map(Path, report["executor_flinkstate"]):
        assert path.parts[-3:] == ("flinkstate.zip", "flinkstate", "__init__.py"), path
        assert path.is_relative_to(cluster.root / "work"), path  # the executor's directory
        assert not path.is_relative_to(REPO), path
    assert all("__editable__" not in found for found in report["executor_meta_path"])

    on_cluster: dict[str, pd.DataFrame] = report["tables"]
    assert list(on_cluster) == list(local)
    assert "keyed key_groups source->counter" in local
    assert "flink checkpoint subtasks" in local
    for name, expected in local.items():
        assert not expected.empty, name
        pdt.assert_frame_equal(
            on_cluster[name].reset_index(drop=True),
            expected.reset_index(drop=True),
            check_exact=True,
            obj=name,
        )


#: a restart whose exploration finds a deadlock (tests/cli/test_explore.py's SEQUENTIAL, seed 4)
EXPLORED = (
    "selective-reading-all-gates",
    "--seed",
    "4",
    *("--set", "records=2", "--set", "record_size=100", "--set", "checkpoint_interval=2"),
    *("--set", "cost=0", "--set", "parallelism=1", "--set", "source_parallelism=1"),
    *("--set", "network_buffers=32"),
)


def test_exploration_on_a_standalone_cluster_equals_the_single_process_search(
    cluster: Cluster,
) -> None:
    """``flinkstate explore --spark --master spark://...``: the executors build the scenario's
    restart from the zip, replay paths and check states; the verdict, the counts and the
    deadlock's trace are the single-process search's."""
    from flinkstate.cli import main

    cwd = cluster.root / "explorer"
    cwd.mkdir()
    env = {k: v for k, v in cluster.env.items() if k != "SPARK_LOCAL_IP"}
    command = [sys.executable, "-m", "flinkstate", "explore", *EXPLORED, "--json", "--spark"]
    try:
        done = subprocess.run(
            [*command, "--master", cluster.master],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=DRIVER_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the exploration on {cluster.master} timed out\n{_logs(cluster.root)}")
    if done.returncode != 1:  # 1: something found
        pytest.fail(f"exited with {done.returncode}: {done.stderr}\n{_logs(cluster.root)}")
    on_cluster = json.loads(done.stdout)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["explore", *EXPLORED, "--json", "--quiet", "--reduction", "none"]) == 1
    single = json.loads(buffer.getvalue())
    for document in (on_cluster, single):
        del document["elapsed_seconds"]
        document["bounds"].pop("max_memory", None)
    assert on_cluster == single
    assert on_cluster["exhausted"] is True
    assert [f["kind"] for f in on_cluster["findings"]] == ["deadlock"]
