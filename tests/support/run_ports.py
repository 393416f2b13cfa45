"""Every fixed port a `cultists run` binds, moved to a free one, for tests that start it.

Read from the run's own list (services/cli/run_cmd.ports_to_check), so a port the run
learns to bind is moved here too: a test's run never collides with a platform someone
else runs on the default ports of this machine (`cultists run` refuses a busy port).
"""

from __future__ import annotations

from services.cli.run_cmd import ports_to_check
from services.runtime.ports import free_port


def free_run_ports() -> dict[str, str]:
    """{variable: free port} for every port variable of a run with Prometheus."""
    return {use.variable: str(free_port()) for use in ports_to_check(True) if use.variable}
