"""Balance science without Flask or Celery: sweeps (specs, planning, simulation,
aggregation, statistics, drift, reports, stores, control) and tunes.

The Celery tasks in `workers/` are thin wrappers over these functions, and the CLI's
`--local` runs the very same ones in a process pool.
"""
