"""The containers start: every service of docker-compose.yml and every Kubernetes
Deployment, run from the image as the Dockerfile builds it, passes its own health check,
and together they serve a game end to end and finish a sweep.

No container engine runs on these machines, so `containers.py` does what one would: the
wheel built as the Dockerfile builds it and installed into a fresh virtualenv outside
the checkout, each service started with its own command and environment (as given by
`docker-compose config` and `kubectl kustomize deploy/k8s`), from the image's working
directory, as an unprivileged user when the test runs as root, with service names
resolved to loopback and ports remapped to free ones.

Third-party images are stood in for by the machine's own binaries. Redis is the machine's
redis-server on the service's port. Prometheus is Debian's `prometheus` run as the
compose service runs prom/prometheus (its command after the image's entrypoint, the
project's deploy/prometheus mounted read-only at /etc/prometheus, a fresh data volume,
the image's working directory and user; containers.prometheus_image), and it must scrape
every app service of the setup. Grafana is left out: no registry these machines reach
ships a grafana-server (Debian dropped the package, the PyPI `grafana` name is an empty
placeholder, npm has dashboard tools only), and its dashboards' queries are proven
against the project's Prometheus by tests/deploy/test_stack.py.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from services.runtime.embedded_redis import redis_binary
from tests.deploy.containers import (
    COMPOSE_SECRETS,
    ROOT,
    Container,
    Network,
    build_image,
    compose_config,
    grpc_serving,
    http_ok,
    prometheus_image,
)
from tests.deploy.stack import SHORT_GAMES
from tests.deploy.stack import http as _http
from tests.deploy.stack import wait as _wait

PASSWORD = "images designer passphrase 9"

THIRD_PARTY = {"grafana"}  # no binary to stand in for its image: see above
PROMETHEUS_PORT = 9090  # where prom/prometheus listens unless told otherwise
UNSCRAPED = {"beat"}  # serves no metrics: it only sends tasks
SWEEP = {"game": "trash_cult", "seed": 5, "games": 8, "chunk": 4, "players": [2], "max_turns": 40,
         "lineups": ["random"]}  # fmt: skip


# Building the image from nothing (every dependency wheel, some from source) takes minutes
# on a fresh machine; later builds reuse the dependency wheels.
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def image():
    return build_image(log=lambda line: print(time.strftime("%H:%M:%S"), line, flush=True))


@pytest.fixture()
def home() -> Iterator[Path]:
    """Where the containers' file systems go: traversable by the unprivileged user
    (pytest's own temporary folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="cultists-containers-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _start_redis(network: Network, name: str, port: int, home: Path, argv: list[str]) -> subprocess.Popen:
    data = home / f"{name}-data"
    data.mkdir()
    local = network.port(name, port)
    args = [redis_binary(), *argv[1:], "--port", str(local), "--bind", "127.0.0.1", "--dir", str(data),
            "--save", ""]  # fmt: skip
    password = argv[argv.index("--requirepass") + 1] if "--requirepass" in argv else None
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait(lambda: http_ok_redis(local, password), 30, "redis")
    return proc


def http_ok_redis(port: int, password: str | None = None) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, password=password, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def _play_and_sweep(gateway: str, metrics_port: int, redis_port: int, redis_password: str | None) -> None:
    """A bot game through the gateway and the engines, and a sweep on the worker (by a
    designer made as `cultists admin create-user` makes one, on the stack's Redis)."""
    import redis as redis_client

    from services.platform.players import PlayerBook

    stack_redis = redis_client.Redis(port=redis_port, password=redis_password)
    PlayerBook(stack_redis, 0).create_account("images-designer", PASSWORD, "designer")
    staff = {
        "X-Player-Token": _http(
            f"{gateway}/api/sessions", {"username": "images-designer", "password": PASSWORD}
        )["token"]
    }
    players = 3  # Crazy Cultists plays 3 or more (CC-2)
    body = {"game": "crazy_cultists", "players": players, "config": SHORT_GAMES["crazy_cultists"],
            "seats": [{"kind": "bot", "bot": "random"}] * players}  # fmt: skip
    table = _http(f"{gateway}/api/tables", body)["table"]
    sweep = _http(f"{gateway}/api/sweeps", SWEEP, headers=staff)["id"]
    _wait(lambda: _http(f"{gateway}/api/tables/{table}")["status"] == "finished", 120, "the bot game")
    assert _http(f"{gateway}/api/tables/{table}/replay")["actions"]
    _wait(lambda: _http(f"{gateway}/api/sweeps/{sweep}", headers=staff)["status"] == "done", 180, "the sweep")
    assert _http(f"{gateway}/api/sweeps/{sweep}", headers=staff)["games_done"] == SWEEP["games"]
    page = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    assert f'cultists_sweep_games_simulated_total{{game="trash_cult"}} {float(SWEEP["games"])}' in page, page


# Exits non-zero, naming them, when a module in the installed package's built.json imports
# from its .py instead of its compiled .so.
COMPILED_ENGINES_LOAD = """
import importlib, json, pathlib, sys
import services.engines as engines
built = json.loads((pathlib.Path(engines.__file__).parent / "built.json").read_text())
source = [m for m in built if importlib.import_module(m).__file__.endswith(".py")]
print("compiled engine modules loading their source:", source)
sys.exit(bool(source))
"""


def _stop(containers: list[Container], others: list[subprocess.Popen]) -> None:
    for container in reversed(containers):
        container.stop()
    for proc in others:
        proc.terminate()
        proc.wait(timeout=20)


def test_compose_services_start_and_serve(image, home):
    done = compose_config()
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    services = {n: s for n, s in config["services"].items() if n not in THIRD_PARTY}
    network = Network(config["services"])
    ours = {n: s for n, s in services.items() if s.get("image", "").startswith("cultists")}
    for name, service in services.items():
        texts = [*service.get("command", []), *map(str, (service.get("environment") or {}).values())]
        texts += map(str, (service.get("healthcheck") or {}).get("test", []))
        texts += [str(p).split(":")[-1].split("/")[0] for p in service.get("ports", [])]
        network.claim(name, texts)
    others: list[subprocess.Popen] = []
    started: list[Container] = []
    try:
        for name, service in services.items():
            if name not in ours and name != "prometheus":  # Redis: the real server on its port
                assert name == "redis", f"compose service {name} runs an image this test does not know"
                others.append(_start_redis(network, name, 6379, home, service["command"]))

        def make(name: str, service: dict) -> Container:
            if name == "prometheus":
                return _prometheus(network, service, home)
            env = {k: str(v) for k, v in (service.get("environment") or {}).items()}
            return Container(image, name, list(service["command"]), env, network, home,
                             mounts=list(service.get("tmpfs") or []),
                             volumes=list(service.get("volumes") or []))  # fmt: skip

        ready = {n: "healthy" for n in services if n not in ours and n != "prometheus"}
        todo = {n: s for n, s in services.items() if n not in ready}
        started += _start_all(todo, ready, make, _compose_check, home)
        # The code that runs is the installed wheel's, never the checkout's.
        app = next(c for c in started if c.image is image)
        where = "import services, sys; sys.exit(not services.__file__.startswith(sys.argv[1]))"
        assert app.exec(["python", "-c", where, str(image.venv)]) == 0
        # Every engine module the build stage compiled is the one that loads (not a stale
        # fallback to its source because the wheel left out something its hash covers).
        assert app.exec(["python", "-c", COMPILED_ENGINES_LOAD]) == 0
        gateway = f"http://127.0.0.1:{network.ports['gateway', 8000]}"
        _play_and_sweep(
            gateway,
            network.ports["worker-sweeps", 9100],
            network.ports["redis", 6379],
            COMPOSE_SECRETS["REDIS_PASSWORD"],
        )
        assert "prometheus" in services, "docker-compose.yml has no prometheus service"
        _assert_scraped(
            f"http://127.0.0.1:{network.ports['prometheus', PROMETHEUS_PORT]}", set(ours) - UNSCRAPED
        )
    finally:
        _stop(started, others)


RESTARTS = ("always", "unless-stopped", "on-failure")  # compose's policies that restart


def _start_all(
    services: dict[str, dict],
    ready: dict[str, str],
    make: Callable[[str, dict], Container],
    health: Callable[[Container, dict], Callable[[], bool]],
    home: Path,
) -> list[Container]:
    """Start `services` as compose does: each as soon as its depends_on conditions hold
    (`service_started` or `service_healthy`; none: at once, as Kubernetes starts pods),
    each one's health check (`health`) run over and over, concurrently with the others',
    until it passes. Returns the containers once every one is healthy. `ready` holds the
    state of services started already ("healthy")."""
    state = dict(ready)
    pending = dict(services)
    restarted: set[str] = set()
    checking: dict[str, tuple[Container, Callable[[], bool], Future | None]] = {}
    started: list[Container] = []
    deadline = time.monotonic() + 180
    with ThreadPoolExecutor(max_workers=max(1, len(services))) as pool:
        try:
            while pending or checking:
                for name, service in list(pending.items()):
                    needs = service.get("depends_on") or {}
                    if all(
                        state.get(d) == "healthy"
                        or (state.get(d) and c.get("condition") == "service_started")
                        for d, c in needs.items()
                    ):
                        container = make(name, pending.pop(name))
                        container.start(home / f"{name}.log")
                        started.append(container)
                        state[name] = "started"
                        checking[name] = (container, health(container, service), None)
                for name, (container, check, running) in list(checking.items()):
                    if running is None:
                        checking[name] = (container, check, pool.submit(check))
                    elif running.done():
                        if running.result():
                            state[name] = "healthy"
                            del checking[name]
                        elif not container.alive():
                            first = container.log.read_text()[-3000:]
                            if services[name].get("restart") not in RESTARTS or name in restarted:
                                raise AssertionError(f"{name} exited: {first}")
                            # What compose does for a service with a restart policy; once
                            # only, and said, so a crash loop still fails the test.
                            print(f"{name} exited before it was healthy; restarted once:\n{first}")
                            restarted.add(name)
                            container.start(home / f"{name}.restart.log")
                            checking[name] = (container, health(container, services[name]), None)
                        else:
                            checking[name] = (container, check, pool.submit(check))
                if time.monotonic() > deadline:
                    logs = {n: c.log.read_text()[-1500:] for n, (c, _check, _f) in checking.items()}
                    raise AssertionError(
                        f"never healthy: {sorted(checking)}; unmet: {sorted(pending)}; {logs}"
                    )
                time.sleep(0.1)
        except BaseException:
            _stop(started, [])
            raise
    return started


def _prometheus(network: Network, service: dict, home: Path) -> Container:
    """The compose service's command after the image's entrypoint, its volumes mounted,
    and the listen address the image defaults to (0.0.0.0:9090) said explicitly so that
    the port can be remapped as the stack's network would. The service publishes no
    port (docs/security.md); its health check names 9090, which claims it here."""
    port = PROMETHEUS_PORT
    argv = [*service["command"], f"--web.listen-address=0.0.0.0:{port}"]
    return Container(prometheus_image(), "prometheus", argv, {}, network, home,
                     volumes=list(service["volumes"]))  # fmt: skip


def _assert_scraped(prometheus: str, services: set[str]) -> None:
    """Prometheus scrapes every one of `services` (its target up) and holds cultists_
    series from each."""

    def query(q: str) -> list[dict]:
        return _http(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": q}))["data"]["result"]

    def all_up() -> bool:
        up = {s["metric"].get("service"): s["value"][1] for s in query("up")}
        return up == dict.fromkeys(services, "1")

    _wait(all_up, 60, f"Prometheus to scrape {sorted(services)}")
    # Scraped series only: a recording rule's (cultists_gateway_time_to_match_seconds:p50,
    # made once Prometheus has evaluated its rules, sooner or later on a busy machine) is
    # Prometheus's own and carries no service.
    scraped = 'count by (service) ({__name__=~"cultists_.+", service!=""})'
    found = {s["metric"]["service"] for s in query(scraped)}
    assert found == services, f"cultists_ series from {sorted(found)}, expected {sorted(services)}"


def _compose_check(container: Container, service: dict):
    test = (service.get("healthcheck") or {}).get("test")
    if not test:  # no health check (beat): running a few seconds counts
        since = time.monotonic()
        return lambda: time.monotonic() - since > 3
    kind, *rest = test
    if kind == "CMD-SHELL":
        argv = ["/bin/sh", "-c", rest[0].replace("$$", "$")]
    else:
        assert kind == "CMD", test
        argv = rest
    return lambda: container.exec(argv) == 0


def test_kubernetes_deployments_start_and_serve(image, home):
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is not installed: `make install` (deploy/system-packages.sh) installs it"
    rendered = subprocess.run(
        [kubectl, "kustomize", str(ROOT / "deploy" / "k8s")], capture_output=True, text=True, check=True
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    maps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
    secrets = {
        d["metadata"]["name"]: {**{k: base64.b64decode(v).decode() for k, v in d.get("data", {}).items()},
                                **d.get("stringData", {})}
        for d in docs if d["kind"] == "Secret"
    }  # fmt: skip
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    network = Network([d["metadata"]["name"] for d in docs if d["kind"] == "Service"] + ["redis"])
    redis = _start_redis(network, "redis", 6379, home, ["redis-server", "--appendonly", "yes"])
    redis_url = "redis://redis:6379/0"  # the Secret's external Redis: ours, by its network name
    pods = []
    for deployment in deployments:
        name = deployment["metadata"]["name"]
        [spec] = deployment["spec"]["template"]["spec"]["containers"]
        env: dict[str, str] = {}
        for source in spec.get("envFrom", []):
            if "configMapRef" in source:
                env |= maps[source["configMapRef"]["name"]]
            if "secretRef" in source:
                env |= secrets[source["secretRef"]["name"]]
        for item in spec.get("env", []):
            if "value" in item:
                env[item["name"]] = str(item["value"])
            else:
                ref = item["valueFrom"]["secretKeyRef"]
                env[item["name"]] = secrets[ref["name"]][ref["key"]]
        if "REDIS_URL" in env:
            env["REDIS_URL"] = redis_url
        argv = [*spec.get("command", []), *spec.get("args", [])]
        network.claim(name, [*argv, *env.values(), *(str(p["containerPort"]) for p in spec.get("ports", []))])
        # A PersistentVolumeClaim is one folder every pod that claims it shares (a named
        # volume); any other volume (emptyDir) is fresh per pod.
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
                  for v in deployment["spec"]["template"]["spec"].get("volumes", [])
                  if "persistentVolumeClaim" in v}  # fmt: skip
        mounts = [m["mountPath"] for m in spec.get("volumeMounts", []) if m["name"] not in claims]
        shared = [
            f"{claims[m['name']]}:{m['mountPath']}"
            for m in spec.get("volumeMounts", [])
            if m["name"] in claims
        ]
        pods.append((Container(image, name, argv, env, network, home, mounts=mounts, volumes=shared), spec))
    started: list[Container] = []
    try:
        by_name = {container.name: (container, spec) for container, spec in pods}
        specs = {name: spec for name, (_container, spec) in by_name.items()}
        started += _start_all(specs, {}, lambda name, _spec: by_name[name][0], _probe, home)
        gateway = f"http://127.0.0.1:{network.ports['gateway', 8000]}"
        # The Secret names a Redis outside the manifests; ours for the test has no password.
        _play_and_sweep(gateway, network.ports["worker-sweeps", 9100], network.ports["redis", 6379], None)
    finally:
        _stop(started, [redis])


def _probe(container: Container, spec: dict):
    probe = spec.get("readinessProbe") or spec.get("livenessProbe")
    if probe is None:
        since = time.monotonic()
        return lambda: time.monotonic() - since > 3
    named = {p.get("name"): p["containerPort"] for p in spec.get("ports", [])}

    def local(port) -> int:
        return container.network.ports[container.name, named.get(port, port)]

    if "grpc" in probe:
        return lambda: grpc_serving(local(probe["grpc"]["port"]), probe["grpc"].get("service", ""))
    if "httpGet" in probe:
        url = f"http://127.0.0.1:{local(probe['httpGet']['port'])}{probe['httpGet'].get('path', '/')}"
        return lambda: http_ok(url)
    return lambda: container.exec(probe["exec"]["command"]) == 0
