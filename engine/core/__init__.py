"""The engine's core: attention, positions, traces, hook points, threads, memory, errors."""
