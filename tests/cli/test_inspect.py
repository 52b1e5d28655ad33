"""``flinkstate inspect`` on the checkpoints Flink wrote: the figures Flink reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinkstate.cli import main
from flinkstate.flinkcheckpoint import real_checkpoint
from tests.flinkcheckpoint.made import STRING_KEYED, made_checkpoint, record_type
from tests.flinkcheckpoint.test_metadata import CHECKPOINTS, ground_truth

#: what the test jobs send
TUPLE = "Tuple2<Long,String>"
EDGE_F5 = "to-record->slow-counter=hash:f5"
EDGE_F0 = "to-record->slow-counter=hash:f0"
#: the committed checkpoints of the jobs keyed by f0 % 1000
KEYED = [p for p in CHECKPOINTS if "rebalance" not in p.parents[1].name]


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_json_totals_are_flinks(checkpoint: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(checkpoint), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    truth = ground_truth(checkpoint)["summary"]
    assert summary["totals"]["input_bytes"] == truth["inflight_payload_bytes_input"]
    assert summary["totals"]["output_bytes"] == truth["inflight_payload_bytes_output"]
    stitched = ground_truth(checkpoint)["stitched_channels"]
    assert summary["totals"]["records"] == sum(
        c["decode"]["num_complete_elements"] for c in stitched
    )
    assert len(summary["channels"]) == truth["num_channel_state_handles_unmerged"]
    assert len(summary["keyed_state"]) == truth["num_keyed_state_handles"]
    assert summary["totals"]["unclean_channels"] == 0
    # every channel's chunks where Flink wrote them, and their lengths as Flink read them
    chunks = {}
    for entry in ground_truth(checkpoint)["channel_state_handles"]:
        first = entry.get("gate_idx", entry.get("partition_idx"))
        second = entry.get("input_channel_idx", entry.get("subpartition_idx"))
        key = (entry["operator_uid"], entry["subtask_index"], entry["kind"], first, second)
        chunks[key] = (entry["offsets"], [c["length"] for c in entry["chunks"]])
    uids = {op["operator"]: op["uid"] for op in summary["operators"]}
    for channel in summary["channels"]:
        key = (
            uids[channel["operator"]],
            channel["subtask"],
            channel["side"],
            channel["gate_or_partition"],
            channel["channel_or_subpartition"],
        )
        assert (channel["offsets"], channel["lengths"]) == chunks.pop(key)
        assert len(channel["offsets"]) == channel["chunks"]
        assert sum(channel["lengths"]) == channel["bytes"]
    assert not chunks


def test_tables_name_operators_and_channels(capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    assert main(["inspect", str(checkpoint / "_metadata")]) == 0
    out = capsys.readouterr().out
    assert "checkpoint 48 (metadata version 6)" in out
    assert "slow-counter        0  0..31        6351" in out
    assert "to-record:0>slow-counter:0" in out
    assert "1,643 records, 4 split between a channel's input and output state" in out


def test_raw_records_and_named_edges(capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "rebalance-forward-p2-p3")
    args = ["inspect", str(checkpoint), "--json", "--record-type", "raw"]
    assert main([*args, "--edge", "to-record:0>relay:0"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["logical_channels"]
    assert all(c["first_value"] is None for c in summary["logical_channels"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--edge", "nonsense"], "an edge is UP:PARTITION>DOWN:GATE"),
        (["--record-type", "Map<Long,Long>"], "no decoder for 'Map<Long,Long>'"),
        (["--reroot", "nothing"], "--reroot takes STORED=LOCAL"),
        # each taken without a word before
        (["--reroot", "relative=folder"], "STORED is an absolute path"),
        (["--reroot", "/a=b", "--reroot", "/a=c"], "--reroot /a is given twice ('b' and 'c')"),
        (
            ["--exchange", "nosuch->slow-counter=rebalance"],
            "no exchange 'nosuch->slow-counter' carried channel state in checkpoint",
        ),
        # two partitioners for one exchange: the first used to be dropped without a word
        (
            [
                "--exchange",
                "to-record->slow-counter=rebalance",
                "--exchange",
                "to-record->slow-counter=forward",
            ],
            "--exchange names to-record->slow-counter twice",
        ),
    ],
)
def test_bad_options_are_named(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(CHECKPOINTS[0]), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_corrupt_or_missing_checkpoint_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(tmp_path)]) == 2
    assert "expected a checkpoint _metadata file" in capsys.readouterr().err
    (tmp_path / "_metadata").write_bytes(b"\x49\x60\x67\x2d\x00\x00\x00\x06\x00")
    assert main(["inspect", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "_metadata: at byte 8: expected the checkpoint id" in err
    assert "Traceback" not in err


def test_export_writes_a_dataset_rescale_can_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from flinkstate.dataset import read_dataset

    checkpoint = next(p for p in CHECKPOINTS if p.parents[1].name == "keyed-hash-p2-p4")
    out = tmp_path / "dataset"
    args = ["inspect", str(checkpoint), "--export", str(out), "--record-type", TUPLE]
    assert main([*args, "--exchange", "to-record->slow-counter=hash:f0%1000"]) == 0
    assert "wrote the dataset to" in capsys.readouterr().out
    dataset = read_dataset(out)
    assert dataset.tables["buffers"].num_rows == 29
    assert set(dataset.tables["exchanges"].column("partitioner").to_pylist()) == {
        "KeyGroupStreamPartitioner"
    }
    assert main([*args, "--exchange", "nonsense"]) == 2
    assert "--exchange takes UP->DOWN=PARTITIONER[:KEY]" in capsys.readouterr().err


def test_a_union_counts_the_records_of_both_gates(capsys: pytest.CaptureFixture[str]) -> None:
    """Before, only the gate from the 3-subtask upstream was inferred: 2,308 of 5,420 records
    were counted, with exit 0."""
    assert main(["inspect", str(real_checkpoint("union-keyed-p2-p3-p4")), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    edges = {c["edge"] for c in summary["logical_channels"]}
    assert edges == {"to-record:0>slow-counter:0", "to-record-b:0>slow-counter:1"}
    logical = summary["logical_channels"]
    assert sum(c["input_bytes"] for c in logical) == summary["totals"]["input_bytes"] == 136384
    assert sum(c["output_bytes"] for c in logical) == summary["totals"]["output_bytes"] == 83568
    assert summary["totals"]["records"] == 5420
    assert summary["warnings"] == []


def test_warnings_are_in_the_tables_and_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = str(real_checkpoint("union-keyed-p2-p3-p4"))
    edge = ["--edge", "to-record:0>slow-counter:0"]
    assert main(["inspect", checkpoint, *edge]) == 0
    out = capsys.readouterr().out
    assert "2 warning(s):" in out
    assert "warning: the input state of slow-counter gate 1 (7 channel(s), 51236 bytes)" in out
    assert main(["inspect", checkpoint, *edge, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["warnings"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--edge", "to-record:1>slow-counter:0"], "to-record has no output state on partition 1"),
        (["--edge", "slow-counter:0>to-record:0"], "matches no channel state"),
        (
            ["--export", "EXPORT", "--record-type", TUPLE, "--exchange", EDGE_F5],
            "reads field 5, but the records have 2",
        ),
        (
            [
                *("--export", "EXPORT", "--record-type", TUPLE),
                *("--exchange", "to-record->slow-counter=hash:f0%1000"),
                *("--exchange", "up->down=rebalance"),
            ],
            "no exchange 'up->down'",
        ),
        (["--record-type", "Tuple1<" * 1500 + "Long" + ">" * 1500], "nested at most 64 deep"),
    ],
)
def test_edges_exchanges_and_types_that_are_not_there_are_refused(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    args = [str(tmp_path / "out") if a == "EXPORT" else a for a in args]
    assert main(["inspect", checkpoint, *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_export_target_that_cannot_be_a_dataset_is_refused_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    corrupt = tmp_path / "chk-1"
    corrupt.mkdir()
    (corrupt / "_metadata").write_bytes(b"not a checkpoint")
    # the target is refused first: the corrupt checkpoint is never read
    args = ["inspect", str(corrupt), "--export", str(tmp_path), "--exchange", "a->b=rebalance"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "the folder holds other files (chk-1, notes.txt), not a dataset" in err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_the_segment_size_is_given_or_the_jobs_or_flinks_default_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from flinkstate.dataset import check_dataset

    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    export = [
        *("--export", str(tmp_path / "d"), "--record-type", TUPLE),
        *("--exchange", "to-record->slow-counter=hash:f0%1000"),
    ]
    # the job-config.txt beside the checkpoint gives 4kb, as the forecast reads it
    assert main(["inspect", checkpoint, *export]) == 0
    said = "segment size 4096: job-config.txt: taskmanager.memory.segment-size=4kb)"
    assert said in capsys.readouterr().out
    assert check_dataset(tmp_path / "d")["segment_size"] == 4096
    silent = tmp_path / "silent.txt"
    silent.write_text("execution.checkpointing.unaligned.enabled=true\n")
    assert main(["inspect", checkpoint, *export, "--job-config", str(silent)]) == 0
    said = "segment size 32768: Flink's default, give --segment-size or a job-config.txt)"
    assert said in capsys.readouterr().out
    assert check_dataset(tmp_path / "d")["segment_size"] == 32768
    assert main(["inspect", checkpoint, *export, "--segment-size", "8kb"]) == 0
    assert "fragments, segment size 8192: --segment-size)" in capsys.readouterr().out
    assert check_dataset(tmp_path / "d")["segment_size"] == 8192
    assert main(["inspect", checkpoint, "--job-config", str(silent)]) == 2
    assert "--job-config says how to export: give --export DIR too" in capsys.readouterr().err
    # refused before the checkpoint is read, the dataset there left as it was
    assert main(["inspect", "/nowhere", *export, "--segment-size", "5000"]) == 2
    assert "Memory segment size must be a power of 2" in capsys.readouterr().err
    assert check_dataset(tmp_path / "d")["segment_size"] == 8192
    assert main(["inspect", checkpoint, "--segment-size", "4kb"]) == 2
    assert "--segment-size says how to export: give --export DIR too" in capsys.readouterr().err


@pytest.mark.parametrize("checkpoint", KEYED, ids=lambda p: p.parents[1].name)
def test_in_flight_records_are_checked_against_their_subtasks_key_groups(
    checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Given the job's key (f0 % 1000, a Long), every in-flight record Flink wrote is in the
    key groups of the subtask it goes to; f0 alone is not the job's key, and the check counts
    the records it puts elsewhere, on each side, with one of them as an example."""
    common = ["inspect", str(checkpoint), "--record-type", TUPLE, "--json"]
    assert main([*common, "--exchange", EDGE_F0 + "%1000"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (check,) = summary["key_groups"]["checked"]
    records = sum(
        c["decode"]["num_complete_elements"] for c in ground_truth(checkpoint)["stitched_channels"]
    )
    assert (check["key"], check["key_type"], check["records"]) == ("f0%1000", "Long", records)
    assert (check["outside"], check["example"], summary["key_groups"]["not_checked"]) == (
        0,
        None,
        None,
    )
    assert main([*common, "--exchange", EDGE_F0]) == 0
    (check,) = json.loads(capsys.readouterr().out)["key_groups"]["checked"]
    assert 0 < check["outside"] < check["records"] == records
    assert check["outside"] == check["outside_input"] + check["outside_output"]
    assert "which owns key groups" in check["example"]


def test_the_key_group_check_in_the_tables(capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    assert main(["inspect", checkpoint, "--record-type", TUPLE, "--exchange", EDGE_F0]) == 0
    out = capsys.readouterr().out
    assert "to-record->slow-counter keyed by f0 (Long): " in out
    assert "in-flight records are outside the key groups of the subtask they go to (" in out
    assert "    e.g. key " in out
    assert main(["inspect", checkpoint, "--record-type", TUPLE]) == 0
    out = capsys.readouterr().out
    assert "key groups not checked: no key given: --exchange UP->DOWN=hash:KEY with " in out
    assert "(e.g. to-record->slow-counter=hash:f0; keyed consumers: to-record->slow" in out
    # a job whose consumers keep no keyed state: no exchange looks like a keyBy
    rebalance = str(real_checkpoint("rebalance-forward-p2-p3"))
    assert main(["inspect", rebalance, "--record-type", TUPLE]) == 0
    assert (
        "key groups not checked: no operator that receives in-flight data keeps keyed state, "
        "so no exchange here looks like a keyBy (to check one all the same: --exchange "
        in capsys.readouterr().out
    )
    # a key without the records' type is refused, with the types that read them
    assert main(["inspect", checkpoint, "--exchange", EDGE_F0]) == 2
    assert "give their type (--record-type); these types read" in capsys.readouterr().err
    assert main(["inspect", checkpoint, "--record-type", TUPLE, "--exchange", "a->b=hash:f0"]) == 2
    assert "no exchange 'a->b' carried channel state" in capsys.readouterr().err


def test_a_string_keyed_jobs_records_are_in_their_subtasks_key_groups(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A real job keyed by a String field: with its key (String.hashCode) none is outside;
    with the Long beside it most are."""
    checkpoint = made_checkpoint(STRING_KEYED)
    common = ["inspect", str(checkpoint), "--record-type", record_type(checkpoint), "--json"]
    for key, expect_outside in (("f0", False), ("f1", True)):
        assert main([*common, "--exchange", f"to-record->slow-counter=hash:{key}"]) == 0
        (check,) = json.loads(capsys.readouterr().out)["key_groups"]["checked"]
        assert check["records"] > 1000
        assert bool(check["outside"]) is expect_outside
        assert check["key_type"] == ("String" if key == "f0" else "Long")


def test_a_string_keyed_export_rescales(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's command: a String key field exported (it was refused as "not an
    integer"), and ``flinkstate rescale`` runs on the dataset."""
    checkpoint = made_checkpoint(STRING_KEYED)
    out = tmp_path / "string-keyed"
    args = ["--record-type", record_type(checkpoint), "--export", str(out)]
    assert main(["inspect", str(checkpoint), *args, "--exchange", EDGE_F0]) == 0
    assert f"wrote the dataset to {out}" in capsys.readouterr().out
    assert main(["rescale", str(out), "--to", "2"]) == 0
    assert "to-record->slow-counter  3->2" in capsys.readouterr().out


def test_a_name_from_the_file_cannot_break_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A state file named with a newline and a terminal escape: one line, escaped."""
    import dataclasses

    from flinkstate.flinkcheckpoint.handles import MergedChannelStateHandle
    from tests.flinkcheckpoint.fuzz import copy_checkpoint, rewrite_metadata

    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)

    def renamed(m):  # type: ignore[no-untyped-def]
        def handle(h: MergedChannelStateHandle) -> MergedChannelStateHandle:
            delegate = dataclasses.replace(h.delegate, relative_path="x\n\x1b[2Jy")
            return dataclasses.replace(
                h,
                delegate=delegate,
                channels=tuple(dataclasses.replace(c, delegate=delegate) for c in h.channels),
            )

        to_record = m.operator("to-record")
        subtasks = tuple(
            dataclasses.replace(
                s, result_subpartition_state=tuple(map(handle, s.result_subpartition_state))
            )
            for s in to_record.subtasks
        )
        return dataclasses.replace(
            m,
            operators=tuple(
                dataclasses.replace(o, subtasks=subtasks) if o is to_record else o
                for o in m.operators
            ),
        )

    rewrite_metadata(chk, renamed)
    assert main(["inspect", str(chk)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "x\\n\\x1b[2Jy" in err


def test_an_operator_uid_cannot_retitle_or_clear_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An operator whose uid carries terminal escapes (retitle, clear screen) and a line
    break: the tables print it escaped, on its row, with its columns aligned."""
    import dataclasses

    from tests.flinkcheckpoint.fuzz import copy_checkpoint, rewrite_metadata

    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)
    hostile = "\x1b]0;owned\x07\x1b[2J\rcounter\nx"

    def renamed(m):  # type: ignore[no-untyped-def]
        return dataclasses.replace(
            m,
            operators=tuple(
                dataclasses.replace(o, uid=hostile) if o.uid == "slow-counter" else o
                for o in m.operators
            ),
        )

    rewrite_metadata(chk, renamed)
    assert main(["inspect", str(chk)]) == 0
    out = capsys.readouterr().out
    assert not [c for c in out if not c.isprintable() and c != "\n"]
    escaped = "\\x1b]0;owned\\x07\\x1b[2J\\rcounter\\nx"
    operators = out.split("\n\n")[1].splitlines()
    assert operators[4].startswith(escaped + "  ")  # its own row, in the operator column
    assert len({len(line) for line in operators}) == 1  # every row as wide: columns aligned


@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.parents[1].name)
def test_without_a_record_type_the_framing_counts_and_the_type_is_found(
    checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every figure but the values needs no type; the type the jobs sent is among those
    that read every record, on every edge."""
    assert main(["inspect", str(checkpoint), "--json"]) == 0
    framed = json.loads(capsys.readouterr().out)
    assert main(["inspect", str(checkpoint), "--json", "--record-type", TUPLE]) == 0
    decoded = json.loads(capsys.readouterr().out)
    assert framed["totals"] == decoded["totals"]
    assert all(c["first_value"] is None for c in framed["logical_channels"])
    assert framed["record_types"]
    assert all(TUPLE in types for types in framed["record_types"].values())
    assert "record_types" not in decoded
    assert main(["inspect", str(checkpoint)]) == 0
    out = capsys.readouterr().out
    assert "record values are read with their type only (--record-type):" in out
    assert "these types read every record sampled: Tuple2<Long,String>" in out


def test_a_record_type_that_does_not_read_the_records_names_those_that_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    assert main(["inspect", checkpoint, "--record-type", "Tuple2<Long,Long>"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "a value of 25 bytes, the decoder read 16: not a record of the type given;" in err
    assert "these types read every record sampled: Tuple2<Long,String>" in err


def test_an_export_keyed_by_values_needs_their_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    export = ["--export", str(tmp_path / "d"), "--exchange", "to-record->slow-counter=hash:f0"]
    assert main(["inspect", checkpoint, *export]) == 2
    err = capsys.readouterr().err
    assert "keys records by their values: give their type (--record-type);" in err
    assert "these types read every record sampled: Tuple2<Long,String>" in err
    assert main(["inspect", checkpoint, *export, "--record-type", "raw"]) == 2
    assert "which --record-type raw does not decode" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    # a partitioner that reads no value needs no type
    rebalance = real_checkpoint("rebalance-forward-p2-p3")
    plain = ["--export", str(tmp_path / "r"), "--exchange", "to-record->relay=rebalance"]
    assert main(["inspect", str(rebalance), *plain]) == 0
    assert (tmp_path / "r" / "manifest.json").exists()


def test_an_export_keyed_by_another_key_than_the_jobs_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The jobs keyed by f0 % 1000: f0 alone puts records in key groups their subtask does not
    own, which rescaling would count as filtered; the export refuses it, writing nothing."""
    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    export = ["--export", str(tmp_path / "d"), "--record-type", TUPLE]
    assert main(["inspect", checkpoint, *export, "--exchange", EDGE_F0]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is in key group 65, but it was going to slow-counter[0], which owns key groups" in err
    assert "the key given is not the one the job keyed by" in err
    assert not (tmp_path / "d").exists()


def test_a_chunk_two_handles_name_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two channels' handles naming one chunk: refused naming both, as Flink never writes it."""
    from tests.flinkcheckpoint.fuzz import copy_checkpoint, rewrite_metadata
    from tests.flinkcheckpoint.test_channel_state_file import shared_chunk

    chk = copy_checkpoint(real_checkpoint("keyed-hash-p2-p4"), tmp_path)
    rewrite_metadata(chk, lambda m: shared_chunk(m, within=False))
    assert main(["inspect", str(chk)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "subtask 0, 0/0 and the chunk at 4 of to-record's output handle of subtask 0, 0/1" in err
