"""The parameter sets several families of scenarios start from: a back-pressured keyed job,
and a rescaled restart that filters on the reader thread. Each family varies one of them, so a
pair of scenarios differs in the setting it is about and nothing else."""

from __future__ import annotations

#: a keyed job back-pressured enough that its checkpoints hold in-flight data
BACKPRESSURED = {"records": 120, "record_size": 3000, "cost": 4, "checkpoint_interval": 200}

#: a rescaled restart that filters on the reader thread, with records that complete needing
#: ten 4 KiB post-filter buffers (k = 10; E = 2 exclusive, L = 8 floating)
FILTER_ON_READ = {
    "records": 40,
    "record_size": 37_000,
    "cost": 4,
    "checkpoint_interval": 200,
    "generation": "v1",
    "checkpointing_during_recovery": True,
    "recover_output_on_downstream": True,
    "new_parallelism": 3,
}
