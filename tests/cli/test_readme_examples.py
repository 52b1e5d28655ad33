"""The README's command-line examples are the program's real output, kept true by this test."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from flinkstate.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"

#: ``flinkstate rescale`` starts Spark in this process: under xdist, its examples run on the
#: worker that runs the tests with the embedded session (tests/conftest.py), so that one JVM
#: serves both; the others go to whichever worker is free
SPARK = pytest.mark.xdist_group("spark")


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced block without a language (```` ``` ````): those hold examples
    with their output; a block with one (```` ```bash ````) only shows a command. Fences are
    paired line by line, so a block with a language never shifts the pairing of the rest."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    plain = False
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current, plain = [], line.strip() == "```"
            else:
                if plain:
                    blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def examples() -> list[tuple[str, str]]:
    """``$ flinkstate ...`` lines in fenced blocks, with the output that follows each."""
    found = []
    for lines in fenced_blocks(README.read_text()):
        for i, line in enumerate(lines):
            if line.startswith("$ flinkstate "):
                output = []
                for rest in lines[i + 1 :]:
                    if rest.startswith("$ "):
                        break
                    output.append(rest)
                found.append((line[2:], "\n".join(output).rstrip()))
    return found


def test_the_readme_has_examples() -> None:
    assert any(command.startswith("flinkstate run ") for command, _ in examples())


def _marked(command: str, expected: str) -> object:
    return pytest.param(
        command, expected, marks=SPARK if command.startswith("flinkstate rescale ") else ()
    )


@pytest.mark.slow
@pytest.mark.parametrize(("command", "expected"), [_marked(c, e) for c, e in examples()])
def test_readme_example_output_is_current(
    command: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if not expected:
        pytest.skip(f"{command!r} shows no output in the README")
    code = main(shlex.split(command)[1:])
    captured = capsys.readouterr()
    failing = expected.startswith("flinkstate: error:")
    # an error exits 2; a run may exit 1 (an outcome other than the expected one) by design
    assert code == 2 if failing else code in (0, 1)
    assert (captured.err if failing else captured.out).rstrip() == expected


def update_readme() -> None:
    """Rewrite every example's output with the program's current output."""
    import contextlib
    import io

    text = README.read_text()
    for command, expected in examples():
        if not expected:
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(shlex.split(command)[1:])
        fresh = err.getvalue() if expected.startswith("flinkstate: error:") else out.getvalue()
        text = text.replace(f"$ {command}\n{expected}\n", f"$ {command}\n{fresh.rstrip()}\n", 1)
    README.write_text(text)


if __name__ == "__main__":  # python tests/cli/test_readme_examples.py: refresh the README
    update_readme()
