"""Running the model for people: scenario traces, what-if sweeps, forecasts from real
checkpoints, counterexamples from the explorer, and the traces of topologies."""
