"""The catalogue: data, apart from mechanism. Topologies (jobs and their parameters),
recovery scenarios, presets, and the small reproducers of every fault and hazard."""
