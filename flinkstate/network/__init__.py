"""A model of Flink's network stack: buffers and pools, result partitions, input gates and
channels, records spanning buffers, credit-based flow control, tasks with processing costs.

The world object (:class:`~flinkstate.network.world.NetworkWorld`) holds every piece of mutable
state and implements the simulation core's :class:`~flinkstate.sim.core.Model` protocol.
"""
