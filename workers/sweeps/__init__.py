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
- `tasks`: the Celery tasks (chunk, finish, reconcile, nightly)
- `partial`: per-chunk partial aggregates (counts and sums) that merge associatively
- `aggregate`, `stats`, `summary`: counting, Wilson / chi-square / BH, the JSON summary
- `report`, `plots`, `records`: HTML + PNG report, per-game Parquet records by cell
- `nightly`: the standard suite and the drift comparison
- `metrics`: Prometheus metrics, multiprocess mode

See docs/sweeps.md.
"""
