"""``python -m flinkstate`` runs the command line."""

from __future__ import annotations

from flinkstate.launch import main

raise SystemExit(main())
