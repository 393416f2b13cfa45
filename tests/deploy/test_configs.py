"""The deploy files are checked by the tools that will read them for real."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.deploy.containers import COMPOSE_SECRETS, compose_config

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed: `make install` (deploy/system-packages.sh) installs it"
    return path


def _run(*args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_prometheus_config_and_rules_are_valid():
    promtool = _tool("promtool")
    out = _run(promtool, "check", "config", "prometheus.yml", cwd=DEPLOY / "prometheus")
    assert "SUCCESS" in out
    _run(promtool, "check", "rules", *map(str, sorted((DEPLOY / "prometheus/rules").glob("*.yml"))))


def test_alert_rules_fire_as_their_unit_tests_say():
    out = _run(_tool("promtool"), "test", "rules", "tests/alerts_test.yml", cwd=DEPLOY / "prometheus")
    assert "SUCCESS" in out


def test_every_alert_has_a_unit_test():
    alerts = {
        rule["alert"]
        for group in yaml.safe_load((DEPLOY / "prometheus/rules/alerts.yml").read_text())["groups"]
        for rule in group["rules"]
    }
    tested = {
        case["alertname"]
        for test in yaml.safe_load((DEPLOY / "prometheus/tests/alerts_test.yml").read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    }
    assert alerts - tested <= {"EngineDown", "MatchmakingBacklogGrowing"}, alerts - tested


def _compose() -> dict:
    done = compose_config()
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def test_compose_file_is_valid():
    config = _compose()
    services = set(config["services"])
    assert {
        "redis", "gateway", "worker-sweeps", "worker-tables", "worker-bots", "beat", "prometheus", "grafana",
        "engine-crazy-cultists", "engine-trash-cult", "engine-tricky-cultists",
    } <= services  # fmt: skip
    for name in services - {"beat", "grafana"}:
        assert "healthcheck" in config["services"][name], f"{name} has no health check"
    for name in ("engine-crazy-cultists", "engine-trash-cult", "engine-tricky-cultists"):
        # Two replicas behind the one name the gateway's round_robin client resolves.
        assert config["services"][name]["deploy"]["replicas"] >= 2, name
        assert config["services"]["gateway"]["environment"][
            f"ENGINE_ADDR_{name[7:].replace('-', '_').upper()}"
        ] == (f"{name}:50051")


def test_kubernetes_manifests_validate_and_are_all_listed():
    k8s = DEPLOY / "k8s"
    files = sorted(p for p in k8s.rglob("*.yaml") if p.name != "kustomization.yaml")
    listed = yaml.safe_load((k8s / "kustomization.yaml").read_text())["resources"]
    assert sorted(str(p.relative_to(k8s)) for p in files) == sorted(listed)
    validate = Path(sys.executable).with_name("kubernetes-validate")
    _run(str(validate), "--strict", "--quiet", *map(str, files))
    docs = [d for p in files for d in yaml.safe_load_all(p.read_text()) if d]
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for target in ("engine-crazy-cultists", "engine-trash-cult", "engine-tricky-cultists", "gateway",
                   "worker-sweeps", "worker-tables", "worker-bots"):  # fmt: skip
        assert ("HorizontalPodAutoscaler", target) in kinds
    beat = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "beat")
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"]["type"] == "Recreate"
    for d in docs:
        if d["kind"] != "Deployment":
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            assert c["resources"]["requests"] and c["resources"]["limits"], d["metadata"]["name"]
            if d["metadata"]["name"].startswith("engine-"):
                assert "grpc" in c["readinessProbe"] and "grpc" in c["livenessProbe"]
            if d["metadata"]["name"] == "gateway":
                assert c["readinessProbe"]["httpGet"]["path"] == "/healthz"
    for d in docs:  # engines: at least two pods, behind a headless Service (every pod's address)
        if d["metadata"]["name"].startswith("engine-") and d["kind"] in ("Deployment", "Service"):
            if d["kind"] == "Deployment":
                assert d["spec"]["replicas"] >= 2, d["metadata"]["name"]
            else:
                assert d["spec"]["clusterIP"] == "None", d["metadata"]["name"]


def test_grafana_dashboards_match_their_generator():
    sys.path.insert(0, str(DEPLOY / "grafana"))
    try:
        import build_dashboards
    finally:
        sys.path.pop(0)
    for name, text in build_dashboards.render().items():
        assert (DEPLOY / "grafana/dashboards" / name).read_text() == text, f"run build_dashboards.py ({name})"
    for path in (DEPLOY / "grafana/dashboards").glob("*.json"):
        board = json.loads(path.read_text())
        assert board["panels"] and all(p["targets"] for p in board["panels"])


def dashboard_metric_names() -> set[str]:
    """Raw metric names the dashboards query (recorded series resolved to their sources)."""
    recorded = {}
    for group in yaml.safe_load((DEPLOY / "prometheus/rules/recording.yml").read_text())["groups"]:
        for rule in group["rules"]:
            recorded[rule["record"]] = rule["expr"]
    names: set[str] = set()
    exprs = [
        t["expr"]
        for path in (DEPLOY / "grafana/dashboards").glob("*.json")
        for p in json.loads(path.read_text())["panels"]
        for t in p["targets"]
    ]
    while exprs:
        expr = exprs.pop()
        for token in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr):
            if token in recorded:
                exprs.append(recorded.pop(token))
            elif token.startswith("cultists_") or token == "up":
                names.add(family(token))
    return names


def family(sample_name: str) -> str:
    """The metric family a sample or TYPE name belongs to (no _bucket/_count/_sum/_total)."""
    return re.sub(r"_(bucket|count|sum|total)$", "", sample_name)


def test_dashboards_only_name_cultists_metrics():
    names = dashboard_metric_names()
    assert names and all(n.startswith("cultists_") or n == "up" for n in names)


@pytest.mark.parametrize("path", sorted((DEPLOY / "prometheus/targets").glob("*.json")))
def test_target_files_are_file_sd_json(path):
    groups = json.loads(path.read_text())
    assert groups and all(g["targets"] for g in groups)


def test_the_data_folder_outlives_restarts_and_is_shared_by_beat_and_the_sweeps_workers():
    """Stored nights and per-game records live in CULTISTS_DATA: a named volume in compose
    and a ReadWriteMany claim in Kubernetes, mounted where beat and every sweeps worker
    read it, never a container's own disk."""
    compose = _compose()
    assert "cultists-data" in compose["volumes"]
    for name in ("worker-sweeps", "beat"):
        service = compose["services"][name]
        mounts = {
            (v["source"], v["target"]) if isinstance(v, dict) else tuple(v.split(":")[:2])
            for v in service["volumes"]
        }
        assert ("cultists-data", "/data") in mounts, name
        assert service["environment"]["CULTISTS_DATA"] == "/data", name
    assert "/data/celerybeat-schedule" in compose["services"]["beat"]["command"]

    docs = [d for d in yaml.safe_load_all(_run(_tool("kubectl"), "kustomize", str(DEPLOY / "k8s"))) if d]
    (claim,) = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert claim["metadata"]["name"] == "cultists-data" and claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for name in ("worker-sweeps", "beat"):
        pod = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == name)["spec"]
        volumes = {v["name"]: v for v in pod["template"]["spec"]["volumes"]}
        (container,) = pod["template"]["spec"]["containers"]
        data = next(m["name"] for m in container["volumeMounts"] if m["mountPath"] == "/data")
        assert volumes[data]["persistentVolumeClaim"]["claimName"] == "cultists-data", name
        assert {"name": "CULTISTS_DATA", "value": "/data"} in container["env"], name


@pytest.mark.parametrize("missing", sorted(COMPOSE_SECRETS))
def test_compose_has_no_default_for_its_secrets(missing):
    """Without REDIS_PASSWORD or GRAFANA_ADMIN_PASSWORD the stack does not start at all,
    rather than with a password everyone knows."""
    done = compose_config({k: v for k, v in COMPOSE_SECRETS.items() if k != missing})
    assert done.returncode != 0 and missing in done.stderr


def test_compose_redis_needs_its_password_and_every_client_sends_it():
    from urllib.parse import urlsplit

    services = _compose()["services"]
    command = services["redis"]["command"]
    assert command[command.index("--requirepass") + 1] == COMPOSE_SECRETS["REDIS_PASSWORD"]
    assert services["redis"]["environment"]["REDISCLI_AUTH"] == COMPOSE_SECRETS["REDIS_PASSWORD"]
    clients = [name for name, s in services.items() if "REDIS_URL" in (s.get("environment") or {})]
    assert {"gateway", "worker-tables", "worker-bots", "worker-sweeps", "worker-tunes", "beat"} <= set(
        clients
    )
    for name in clients:
        url = urlsplit(services[name]["environment"]["REDIS_URL"])
        assert url.password == COMPOSE_SECRETS["REDIS_PASSWORD"] and url.hostname == "redis", name
    assert "ports" not in services["redis"], "Redis is published on the host"


def test_compose_publishes_neither_prometheus_nor_an_open_grafana():
    services = _compose()["services"]
    assert "ports" not in services["prometheus"], "Prometheus is published on the host"
    published = {name for name, s in services.items() if s.get("ports")}
    assert published == {"gateway", "grafana"}, f"only the gateway and Grafana are published: {published}"
    grafana = services["grafana"]
    env = grafana["environment"]
    assert env["GF_SECURITY_ADMIN_PASSWORD"] == COMPOSE_SECRETS["GRAFANA_ADMIN_PASSWORD"]
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "false" and env["GF_USERS_ALLOW_SIGN_UP"] == "false"
    assert all(_host_ip(p) == "127.0.0.1" for p in grafana["ports"]), grafana["ports"]


def _host_ip(port: dict | str) -> str | None:
    """The host address a compose port is published on (long or short form)."""
    if isinstance(port, dict):
        return port.get("host_ip")
    parts = str(port).split(":")
    return parts[0] if len(parts) == 3 else None


def _kustomized() -> list[dict]:
    return [d for d in yaml.safe_load_all(_run(_tool("kubectl"), "kustomize", str(DEPLOY / "k8s"))) if d]


def _selects(selector: dict, labels: dict[str, str]) -> bool:
    """A label selector's verdict (matchLabels and In/NotIn/Exists expressions)."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        value, op = labels.get(expr["key"]), expr["operator"]
        ok = {
            "In": value in expr.get("values", []),
            "NotIn": value not in expr.get("values", []),
            "Exists": value is not None,
            "DoesNotExist": value is None,
        }[op]
        if not ok:
            return False
    return True


# Where a connection comes from or goes to: a pod of ours (its labels) or something outside
# the namespace (a client on the internet, Prometheus in `monitoring`, an external Redis).
OUTSIDE = {"namespace": "elsewhere"}
MONITORING = {"namespace": "monitoring"}


def _peer_matches(peer: dict, other: dict) -> bool:
    if "ipBlock" in peer:
        return "namespace" in other
    if "namespaceSelector" in peer:
        namespace = other.get("namespace", "cultists")
        return _selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": namespace}) and (
            "podSelector" not in peer or "namespace" not in other
        )
    return "namespace" not in other and _selects(peer["podSelector"], other)


def _rule_allows(rule: dict, other: dict, port: int, key: str) -> bool:
    ports = rule.get("ports")
    if ports and not any(p.get("port") == port for p in ports):
        return False
    peers = rule.get(key)
    return not peers or any(_peer_matches(peer, other) for peer in peers)


def _allowed(policies: list[dict], source: dict, target: dict, port: int) -> bool:
    """NetworkPolicy semantics for one TCP connection: each side that some policy selects
    for the direction must have a rule allowing it (unselected pods, and the outside, are
    not restricted here)."""

    def side(pod: dict, direction: str, key: str, other: dict) -> bool:
        if "namespace" in pod:
            return True
        chosen = [
            p for p in policies
            if direction in p["spec"]["policyTypes"] and _selects(p["spec"]["podSelector"], pod)
        ]  # fmt: skip
        return not chosen or any(
            _rule_allows(rule, other, port, key)
            for p in chosen
            for rule in p["spec"].get(direction.lower(), [])
        )

    return side(source, "Egress", "to", target) and side(target, "Ingress", "from", source)


def test_network_policies_let_only_the_platform_reach_engines_and_redis():
    docs = _kustomized()
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    pods = {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"]
        for d in docs if d["kind"] == "Deployment"
    }  # fmt: skip
    engines = [name for name in pods if name.startswith("engine-")]
    assert len(engines) == 3
    default = next(p for p in policies if p["metadata"]["name"] == "default-deny")["spec"]
    assert default["podSelector"] == {} and set(default["policyTypes"]) == {"Ingress", "Egress"}
    redis = {"app.kubernetes.io/name": "redis"}  # an in-cluster Redis, if one is run here

    for engine in engines:
        for name, labels in pods.items():
            expected = name in ("gateway", "worker-tables", "worker-bots")
            assert _allowed(policies, labels, pods[engine], 50051) == expected, (name, engine)
        assert not _allowed(policies, OUTSIDE, pods[engine], 50051), engine
        assert _allowed(policies, MONITORING, pods[engine], 9100), engine
        assert not _allowed(policies, OUTSIDE, pods[engine], 9100), engine
        # An engine reaches nothing: not Redis, not the outside.
        assert not _allowed(policies, pods[engine], OUTSIDE, 6379), engine
        assert not _allowed(policies, pods[engine], redis, 6379), engine
        assert not _allowed(policies, pods[engine], OUTSIDE, 443), engine

    for name, labels in pods.items():
        platform = not name.startswith("engine-")
        assert _allowed(policies, labels, OUTSIDE, 6379) == platform, name  # the external Redis
        assert _allowed(policies, labels, redis, 6379) == platform, name
        assert not _allowed(policies, labels, OUTSIDE, 443), f"{name} may reach the internet"
    assert not _allowed(policies, OUTSIDE, redis, 6379)

    assert _allowed(policies, OUTSIDE, pods["gateway"], 8000)
    for worker in ("worker-tables", "worker-bots", "worker-sweeps", "worker-tunes", "beat"):
        assert not _allowed(policies, OUTSIDE, pods[worker], 9100), worker
        assert not _allowed(policies, pods["gateway"], pods[worker], 9100), worker


def test_kubernetes_redis_url_carries_a_password():
    from urllib.parse import urlsplit

    (secret,) = [d for d in _kustomized() if d["kind"] == "Secret"]
    assert urlsplit(secret["stringData"]["REDIS_URL"]).password
