"""The containers start: every service of docker-compose.yml and every Kubernetes
Deployment, run from the image as the Dockerfile builds it, passes its own health check,
and together they serve a game end to end and finish a sweep.

No container engine runs on these machines, so `containers.py` does what one would: the
wheel built as the Dockerfile builds it and installed into a fresh virtualenv outside
the checkout, each service started with its own command and environment (as given by
`docker-compose config` and `kubectl kustomize deploy/k8s`), from the image's working
directory, as an unprivileged user when the test runs as root, with service names
resolved to loopback and ports remapped to free ones. Third-party images (Redis,
Prometheus, Grafana) are not ours to prove: Redis is the machine's redis-server on the
service's port, Prometheus and Grafana are left out (tests/deploy/test_stack.py runs
Prometheus with the project's config).
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from services.runtime.embedded_redis import redis_binary
from tests.deploy.containers import ROOT, Container, Network, build_image, grpc_serving, http_ok, wait_healthy
from tests.deploy.stack import SHORT_GAMES
from tests.deploy.stack import http as _http
from tests.deploy.stack import wait as _wait

THIRD_PARTY = {"prometheus", "grafana"}
SWEEP = {"game": "trash_cult", "seed": 5, "games": 8, "chunk": 4, "players": [2], "max_turns": 40,
         "lineups": ["random"]}  # fmt: skip


# Building the image from nothing (every dependency wheel, some from source) takes minutes
# on a fresh machine; later builds reuse the dependency wheels.
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def image():
    return build_image(log=lambda line: print(line, flush=True))


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
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait(lambda: http_ok_redis(local), 30, "redis")
    return proc


def http_ok_redis(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def _play_and_sweep(gateway: str, metrics_port: int) -> None:
    """A bot game through the gateway and the engines, and a sweep on the worker."""
    players = 3  # Crazy Cultists plays 3 or more (CC-2)
    body = {"game": "crazy_cultists", "players": players, "config": SHORT_GAMES["crazy_cultists"],
            "seats": [{"kind": "bot", "bot": "random"}] * players}  # fmt: skip
    table = _http(f"{gateway}/api/tables", body)["table"]
    sweep = _http(f"{gateway}/api/sweeps", SWEEP)["id"]
    _wait(lambda: _http(f"{gateway}/api/tables/{table}")["status"] == "finished", 120, "the bot game")
    assert _http(f"{gateway}/api/tables/{table}/replay")["actions"]
    _wait(lambda: _http(f"{gateway}/api/sweeps/{sweep}")["status"] == "done", 180, "the sweep")
    assert _http(f"{gateway}/api/sweeps/{sweep}")["games_done"] == SWEEP["games"]
    page = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    assert f'cultists_sweep_games_simulated_total{{game="trash_cult"}} {float(SWEEP["games"])}' in page, page


def _stop(containers: list[Container], others: list[subprocess.Popen]) -> None:
    for container in reversed(containers):
        container.stop()
    for proc in others:
        proc.terminate()
        proc.wait(timeout=20)


def test_compose_services_start_and_serve(image, home):
    config = yaml.safe_load(
        subprocess.run(
            ["docker-compose", "config"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    )
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
            if name not in ours:  # Redis: the real server on its service's port
                assert name == "redis", f"compose service {name} runs an image this test does not know"
                others.append(_start_redis(network, name, 6379, home, service["command"]))
        healthy = {n for n in services if n not in ours}
        pending = dict(ours)
        while pending:  # in depends_on order, as compose starts them
            wave = [n for n, s in pending.items() if set(s.get("depends_on") or {}) <= healthy]
            assert wave, f"depends_on cannot be met: {pending}"
            batch = []
            for name in wave:
                service = pending.pop(name)
                env = {k: str(v) for k, v in (service.get("environment") or {}).items()}
                container = Container(image, name, list(service["command"]), env, network, home,
                                      mounts=list(service.get("tmpfs") or []))  # fmt: skip
                container.start(home / f"{name}.log")
                started.append(container)
                batch.append((container, service))
            for container, service in batch:
                wait_healthy(container, _compose_check(container, service))
                healthy.add(container.name)
        # The code that runs is the installed wheel's, never the checkout's.
        where = "import services, sys; sys.exit(not services.__file__.startswith(sys.argv[1]))"
        assert started[0].exec(["python", "-c", where, str(image.venv)]) == 0
        gateway = f"http://127.0.0.1:{network.ports['gateway', 8000]}"
        _play_and_sweep(gateway, network.ports["worker-sweeps", 9100])
    finally:
        _stop(started, others)


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
        mounts = [m["mountPath"] for m in spec.get("volumeMounts", [])]
        pods.append((Container(image, name, argv, env, network, home, mounts=mounts), spec))
    started: list[Container] = []
    try:
        for container, _spec in pods:  # Kubernetes starts them all at once
            container.start(home / f"k8s-{container.name}.log")
            started.append(container)
        for container, spec in pods:
            wait_healthy(container, _probe(container, spec))
        gateway = f"http://127.0.0.1:{network.ports['gateway', 8000]}"
        _play_and_sweep(gateway, network.ports["worker-sweeps", 9100])
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
