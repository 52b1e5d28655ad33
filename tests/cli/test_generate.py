"""``flinkstate generate`` writes a readable dataset and refuses bad values in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.cli import main
from flinkstate.dataset import read_dataset


def test_generate_writes_a_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "big"
    status = main(
        ["generate", str(target), "--records", "5000", "--parallelism", "3", "--batch", "1000"]
    )
    assert status == 0
    out, err = capsys.readouterr()
    assert "wrote 5,000 records" in out
    assert "5.00k/5.00k" in err  # the progress bar
    dataset = read_dataset(target)
    assert sorted(dataset.tables["fragments"].column("record").unique().to_pylist()) == list(
        range(5000)
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--records", "0"], "records must be at least 1"),
        (["--records", "10", "--parallelism", "0"], "parallelism"),
        (["--records", "10", "--segment-size", "4097"], "must be a power of 2"),
        # numpy's ValueError traceback before: the seed by run's rule
        (["--records", "10", "--seed", "-1"], "seed must be between 0 and 2147483647, got -1"),
        (["--records", "10", "--seed", str(2**31)], "seed must be between 0 and 2147483647"),
        # refused after the progress bar had appeared
        (["--records", "10", "--batch", "0"], "batch must be at least 1, got 0"),
    ],
)
def test_bad_values_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    assert main(["generate", str(tmp_path / "x"), *arguments]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1  # no progress bar before it
    assert not (tmp_path / "x").exists()


def test_a_folder_of_other_files_is_refused_before_the_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["generate", str(tmp_path), "--records", "10"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"flinkstate: error: cannot write a dataset to {tmp_path}: the folder holds other files "
        "(notes.txt), not a dataset; name a new or empty folder, or a dataset to replace\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_existing_dataset_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generate", str(tmp_path / "d"), "--records", "10"]) == 0
    assert main(["generate", str(tmp_path / "d"), "--records", "20"]) == 0
    assert "wrote 20 records" in capsys.readouterr().out
    assert read_dataset(tmp_path / "d").tables["fragments"].column("record").unique().to_pylist()
    assert "20 records" in read_dataset(tmp_path / "d").manifest["description"]
    assert [p.name for p in tmp_path.iterdir()] == ["d"]
