"""``python -m benchmarks [--smoke]``: run every benchmark and print ratios."""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from benchmarks import (
    bench_canvas,
    bench_checkpoint_read,
    bench_explorer,
    bench_figures,
    bench_flinkcheckpoint,
    bench_keygroups,
    bench_large_restart,
    bench_page,
    bench_rescaling,
    bench_scaling,
    bench_simulator,
)

BENCHMARKS = {
    "canvas": bench_canvas.run,
    "checkpoint_read": bench_checkpoint_read.run,
    "explorer": bench_explorer.run,
    "figures": bench_figures.run,
    "flinkcheckpoint": bench_flinkcheckpoint.run,
    "keygroups": bench_keygroups.run,
    "large_restart": bench_large_restart.run,
    "page": bench_page.run,
    "rescaling": bench_rescaling.run,
    "scaling": bench_scaling.run,
    "simulator": bench_simulator.run,
}


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks they run")
    parser.add_argument("--only", choices=sorted(BENCHMARKS), action="append")
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/latest.json"))
    args = parser.parse_args()

    report = []
    for name in args.only or sorted(BENCHMARKS):
        for m in BENCHMARKS[name](args.smoke):
            report.append(
                {
                    "benchmark": name,
                    "subject": m.name,
                    "baseline": m.baseline_name,
                    "subject_seconds": m.subject_seconds,
                    "baseline_seconds": m.baseline_seconds,
                    "ratio": m.ratio,
                    "items": m.items,
                    "items_per_second": m.items_per_second,
                }
            )
            print(
                f"{name:10}  {m.name}: {m.ratio:.4g} x {m.baseline_name} "
                f"({m.subject_seconds * 1000:.2f} ms, {m.items_per_second:,.0f} items/s)"
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "smoke": args.smoke,
                "python": platform.python_version(),
                "results": report,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
