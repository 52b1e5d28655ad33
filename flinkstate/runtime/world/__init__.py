"""The world the simulator steps: the state holding every component, the builder that sets it up,
the facade that dispatches actions, and what is checked and measured at every step (invariants,
waits-for relations, metrics, record order, independence of actions)."""
