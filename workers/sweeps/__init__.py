"""Balance sweeps: millions of bot games across rule variants, with statistics to trust.

Modules, in the order a sweep meets them:

- `spec`: the sweep spec (YAML/JSON/API body), validated completely before anything runs
- `plan`: cells x seed blocks -> chunks; seeds shared by every cell; seat rotation
- `simulate`: one chunk in-process with the rules library; replay records
- `facts`: per-game hooks for cult / team / card breakdowns, read from public state
- `store`: Redis keys, idempotent chunk results
- `control`: submit / progress / cancel / finish on Celery
- `local`: the same plan in a local process pool (`--local`)
- `tasks`: the Celery tasks (chunk, finish, nightly)
- `aggregate`, `stats`, `summary`: counting, Wilson / chi-square / BH, the JSON summary
- `report`, `plots`: HTML + PNG + CSV report
- `nightly`: the standard suite and the drift comparison
- `metrics`: Prometheus metrics, multiprocess mode

See docs/sweeps.md.
"""
