"""The checkpoint dataset format: a checkpoint's in-flight data as Parquet tables.

One format serves every producer and consumer: the simulator's checkpoints are exported in it
(:mod:`flinkstate.lab.simulation_export`), the reader of real Flink checkpoints produces it
(:mod:`flinkstate.flinkcheckpoint.export`), and the Spark pipeline and the notebooks read it.
The format knows nothing of the simulator. A dataset is a directory with ``manifest.json``
(format name, version, what it describes) and one Parquet file per table.
``data/README.md`` documents every column.

A dataset is written whole or not at all (:func:`dataset_written_whole`): into a temporary
folder beside the target, swapped in complete, so a failed or interrupted export never leaves
a mix of two datasets that reads as one. It replaces an earlier dataset or an empty folder and
refuses a folder holding anything else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from flinkstate.errors import FlinkstateError
from flinkstate.output import check_directory_target, directory_written_whole

FORMAT = "flinkstate-checkpoint-dataset"
#: version 2 added keys of other Java types than Long (``key_type``, ``key_string``)
VERSION = 2
#: the versions read: a version-1 dataset lacks the columns of :data:`ADDED_IN_VERSION_2`,
#: which read as null (every key of it a Long)
READ_VERSIONS = (1, 2)
#: the columns version 2 added, by table (all strings, null where they say nothing)
ADDED_IN_VERSION_2: dict[str, tuple[str, ...]] = {
    "exchanges": ("key_type",),
    "fragments": ("key_string",),
}

SCHEMAS: dict[str, pa.Schema] = {
    "operators": pa.schema(
        [
            ("operator", pa.string()),
            ("kind", pa.string()),
            ("parallelism", pa.int32()),
            ("max_parallelism", pa.int32()),
        ]
    ),
    "exchanges": pa.schema(
        [
            ("exchange", pa.string()),
            ("upstream", pa.string()),
            ("downstream", pa.string()),
            ("partitioner", pa.string()),
            ("downstream_mapper", pa.string()),
            ("upstream_mapper", pa.string()),
            ("unaligned_supported", pa.bool_()),
            # the Java type of the key its records are partitioned by (keyBy; the model's custom
            # partitioner): Long, Integer or String; null where none, and null is a Long
            ("key_type", pa.string()),
        ]
    ),
    "buffers": pa.schema(
        [
            ("buffer_id", pa.int64()),
            ("operator", pa.string()),
            ("subtask", pa.int32()),
            ("side", pa.string()),
            ("exchange", pa.string()),
            ("gate_or_partition", pa.int32()),
            ("channel_or_subpartition", pa.int32()),
            ("order", pa.int32()),
            ("size", pa.int32()),
        ]
    ),
    "fragments": pa.schema(
        [
            ("buffer_id", pa.int64()),
            ("position", pa.int32()),
            ("record", pa.int64()),
            ("key", pa.int64()),  # an integer key (Long or Integer)
            ("key_string", pa.string()),  # a String key
            ("key_group", pa.int32()),
            ("record_bytes", pa.int32()),
            ("fragment_start", pa.int32()),
            ("fragment_bytes", pa.int32()),
            ("continues_from_previous", pa.bool_()),
            ("continues_into_next", pa.bool_()),
        ]
    ),
    "keyed_state": pa.schema(
        [
            ("operator", pa.string()),
            ("subtask", pa.int32()),
            ("key_group_start", pa.int32()),
            ("key_group_end", pa.int32()),
            ("key_group", pa.int32()),
            ("entries", pa.int64()),
        ]
    ),
}


class DatasetError(FlinkstateError):
    """A dataset directory that is missing a table, has another version or a wrong schema.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     try:
    ...         check_dataset(folder)
    ...     except DatasetError as error:
    ...         print(str(error).replace(folder, "FOLDER"))
    FOLDER has no manifest.json: not a checkpoint dataset
    """


@dataclass(frozen=True)
class Dataset:
    """A checkpoint dataset in memory: its manifest and its tables, by name (:data:`SCHEMAS`).

    Examples
    --------
    The committed sample ``keyed``: the keyed job's first checkpoint, as the model's scenario made
    it (``data/keyed``):

    >>> from flinkstate.samples import sample_path
    >>> dataset = read_dataset(sample_path("keyed"))
    >>> dataset.manifest["checkpoint_id"], dataset.manifest["segment_size"]
    (1, 4096)
    >>> {name: table.num_rows for name, table in dataset.tables.items()}
    {'operators': 3, 'exchanges': 2, 'buffers': 31, 'fragments': 42, 'keyed_state': 8}

    Record 6 (key 227, in key group 27), of 3004 bytes, begins in buffer 0 with 1092 bytes and
    goes on in buffer 1 with the other 1912:

    >>> for row in dataset.tables["fragments"].slice(0, 2).to_pylist():
    ...     print(*(row[name] for name in ("buffer_id", "record", "key", "key_group")),
    ...           *(row[name] for name in ("record_bytes", "fragment_start", "fragment_bytes")))
    0 6 227 27 3004 0 1092
    1 6 227 27 3004 1092 1912
    """

    manifest: dict[str, Any]
    tables: dict[str, pa.Table]


#: what a dataset target is called in refusals
_WHAT = "a dataset"


def is_dataset(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds a manifest of this format (any version, tables complete or
    not): a folder that writing a dataset may replace.

    Examples
    --------
    >>> import tempfile
    >>> from flinkstate.samples import sample_path
    >>> is_dataset(sample_path("keyed"))
    True
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     print(is_dataset(folder))
    False
    """
    try:
        manifest = json.loads((Path(directory) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(manifest, Mapping) and manifest.get("format") == FORMAT


def check_dataset_target(directory: str | os.PathLike[str]) -> Path:
    """``directory`` if a dataset can be written there whole (new, empty, or a dataset to
    replace), else an :class:`~flinkstate.errors.InvalidParameterError` naming it: call it
    before the work that produces the dataset.

    Examples
    --------
    A new or empty folder, or a dataset to replace, can be written; a folder holding other files
    is refused before any work:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from flinkstate.errors import InvalidParameterError
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     print(check_dataset_target(Path(folder) / "new") == Path(folder) / "new")
    ...     _ = (Path(folder) / "notes.txt").write_text("mine")
    ...     try:
    ...         check_dataset_target(folder)
    ...     except InvalidParameterError as error:
    ...         print(str(error).replace(folder, "FOLDER"))  # doctest: +NORMALIZE_WHITESPACE
    True
    cannot write a dataset to FOLDER: the folder holds other files (notes.txt), not a dataset;
    name a new or empty folder, or a dataset to replace
    """
    return check_directory_target(Path(directory), is_dataset, _WHAT)


@contextmanager
def dataset_written_whole(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary folder to write a dataset's files into, which becomes ``directory`` when
    the block ends (replacing an earlier dataset there) and vanishes if it raises.

    Examples
    --------
    A block that raises leaves nothing behind; one that ends puts the folder in place whole:

    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder) / "dataset"
    ...     try:
    ...         with dataset_written_whole(target) as temporary:
    ...             _ = (temporary / "manifest.json").write_text("{}")
    ...             raise RuntimeError("interrupted")
    ...     except RuntimeError:
    ...         print(target.exists(), sorted(Path(folder).iterdir()))
    ...     with dataset_written_whole(target) as temporary:
    ...         _ = (temporary / "manifest.json").write_text("{}")
    ...     print(sorted(path.name for path in target.iterdir()))
    False []
    ['manifest.json']
    """
    with directory_written_whole(Path(directory), is_dataset, _WHAT) as temporary:
        yield temporary


def write_dataset(dataset: Dataset, directory: str | os.PathLike[str]) -> Path:
    """Write the manifest and the tables whole (:func:`dataset_written_whole`); the folder.

    Examples
    --------
    The committed sample ``keyed`` written elsewhere, and read back as it was:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from flinkstate.samples import sample_path
    >>> keyed = read_dataset(sample_path("keyed"))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     copy = write_dataset(keyed, Path(folder) / "keyed")
    ...     print(sorted(path.stem for path in copy.glob("*.parquet")))
    ...     print(read_dataset(copy).tables["fragments"].equals(keyed.tables["fragments"]))
    ['buffers', 'exchanges', 'fragments', 'keyed_state', 'operators']
    True
    """
    directory = Path(directory)
    with dataset_written_whole(directory) as temporary:
        for name, table in dataset.tables.items():
            pq.write_table(table, temporary / f"{name}.parquet")
        (temporary / "manifest.json").write_text(
            json.dumps(dataset.manifest, indent=2) + "\n", encoding="utf-8"
        )
    return directory


def check_dataset(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Check a dataset's manifest and every table's schema without reading its rows (Spark
    reads the rows); the manifest. Every problem is a :class:`DatasetError` naming it.

    Examples
    --------
    Only the manifest and the tables' schemas are read:

    >>> from flinkstate.samples import sample_path
    >>> manifest = check_dataset(sample_path("rebalance"))
    >>> manifest["format"], manifest["version"], manifest["checkpoint_type"]
    ('flinkstate-checkpoint-dataset', 2, 'unaligned')
    """
    directory = Path(directory)
    manifest_path = directory / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{directory} has no manifest.json: not a checkpoint dataset") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"{manifest_path} cannot be read: {error}") from None
    if not isinstance(manifest, Mapping) or manifest.get("format") != FORMAT:
        raise DatasetError(f"{manifest_path} does not describe a {FORMAT}")
    version = manifest.get("version")
    if version not in READ_VERSIONS:
        raise DatasetError(
            f"{manifest_path}: dataset version {version!r}, this flinkstate reads versions "
            f"{', '.join(map(str, READ_VERSIONS))}"
        )
    absent = missing_columns(manifest)
    for name, whole in SCHEMAS.items():
        schema = pa.schema([f for f in whole if f.name not in absent.get(name, ())])
        path = directory / f"{name}.parquet"
        if not path.exists():
            raise DatasetError(f"{directory} is missing the {name} table ({path.name})")
        try:
            found = pq.read_schema(path)
        except (OSError, pa.ArrowInvalid) as error:
            raise DatasetError(f"{path} is not a readable Parquet file: {error}") from None
        missing = [f.name for f in schema if f.name not in found.names]
        if missing:
            raise DatasetError(f"{path} lacks column(s) {', '.join(missing)}")
        wrong = [
            f"{f.name} is {found.field(f.name).type}, not {f.type}"
            for f in schema
            if not _castable(found.field(f.name).type, f.type)
        ]
        if wrong:
            raise DatasetError(f"{path} has a column of the wrong type: {'; '.join(wrong)}")
    return dict(manifest)


def missing_columns(manifest: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The columns a dataset of this manifest's version does not have, by table: readers
    add them as nulls (a version-1 dataset's keys are all Longs).

    Examples
    --------
    A version-1 dataset's keys are all Longs: it has neither ``key_type`` nor ``key_string``:

    >>> missing_columns({"version": 1})
    {'exchanges': ('key_type',), 'fragments': ('key_string',)}
    >>> missing_columns({"version": 2})
    {}
    """
    return dict(ADDED_IN_VERSION_2) if manifest.get("version") == 1 else {}


def _castable(found: pa.DataType, wanted: pa.DataType) -> bool:
    """Integers widen or narrow to the format's widths (writers differ); other types must be
    what the format says, or null (a column with no values)."""
    if found == wanted or pa.types.is_null(found):
        return True
    return bool(pa.types.is_integer(found) and pa.types.is_integer(wanted))


def read_dataset(directory: str | os.PathLike[str], tables: Iterable[str] | None = None) -> Dataset:
    """Read and check a dataset (only ``tables`` of it, when named: the small ones are read on
    the driver before Spark starts); every problem is a :class:`DatasetError` naming it.

    Examples
    --------
    The small tables alone, on the driver, before Spark reads the large ones. The committed sample
    ``broadcast`` (``UnalignedCheckpointRescaleITCase``'s job) has state only on the exchanges Flink
    checkpoints unaligned: not the rescale and broadcast ones, nor any input of ``process``, which
    reads the broadcast one:

    >>> from flinkstate.samples import sample_path
    >>> dataset = read_dataset(sample_path("broadcast"), ["operators", "exchanges"])
    >>> sorted(dataset.tables), dataset.tables["exchanges"].num_rows
    (['exchanges', 'operators'], 11)
    >>> for row in dataset.tables["exchanges"].to_pylist():
    ...     print(row["exchange"], row["partitioner"], row["unaligned_supported"])
    source0->global0 GlobalPartitioner True
    global0->rebalance0 RebalancePartitioner True
    rebalance0->upscale0 ShufflePartitioner True
    upscale0->downscale0 ShufflePartitioner True
    downscale0->keyby0 KeyGroupStreamPartitioner True
    keyby0->rescale0 RescalePartitioner False
    rescale0->map RebalancePartitioner True
    map->process RebalancePartitioner False
    source->process BroadcastPartitioner False
    process->failing-map ShufflePartitioner True
    failing-map->sink ShufflePartitioner True
    """
    directory = Path(directory)
    manifest = check_dataset(directory)
    absent = missing_columns(manifest)
    wanted = SCHEMAS if tables is None else {name: SCHEMAS[name] for name in tables}
    read = {}
    for name, schema in wanted.items():
        path = directory / f"{name}.parquet"
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowInvalid) as error:
            raise DatasetError(f"{path} is not a readable Parquet file: {error}") from None
        for column in absent.get(name, ()):
            table = table.append_column(
                schema.field(column), pa.nulls(table.num_rows, schema.field(column).type)
            )
        try:
            read[name] = table.select(schema.names).cast(schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise DatasetError(f"{path} has a column of the wrong type: {error}") from None
    return Dataset(manifest, read)
