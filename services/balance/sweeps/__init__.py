"""Balance sweeps: millions of bot games across rule variants, with statistics to trust.

Modules, in the order a sweep meets them:

- `spec`: the sweep spec (YAML/JSON/API body), validated completely before anything runs
- `plan`: cells x seed blocks -> chunks; seeds shared by every cell; seat rotation
- `simulate`: one chunk in-process with the rules library; replay records
- `facts`: per-game hooks for cult / team / card breakdowns, read from public state
- `store`: Redis keys, idempotent chunk results, retention
- `control`: submit / progress / cancel / finish on Celery; priorities
- `leases`, `reconcile`: chunk leases and the beat task that queues lost chunks again
- `local`: the same plan in a local process pool (`--local`)
- `tasks`: the Celery tasks (chunk, finish, reconcile, nightly, finish_night)
- `partial`: per-chunk partial aggregates (counts and sums) that merge associatively
- `aggregate`, `summary`: counting (statistics: `services.engines.core.stats`), the JSON summary
- `units`, `outcomes`, `paired`, `significance`: seats or teams, per-game outcomes by seed,
  each cell against its base cell, the report's one BH family
- `report`, `plots`, `records`: HTML + PNG report, per-game Parquet records by cell
- `nightly`, `night`, `drift`: the standard suite, a night run and stored, drift between nights
- `metrics`: Prometheus metrics, multiprocess mode

See docs/sweeps.md.
"""
