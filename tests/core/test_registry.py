"""The registry (services/engines/registry.py) is the one list of games.

What can be derived from it is (the local run's ports, the compile list); what is written
in files other tools read (pyproject.toml, docker-compose, the Kubernetes manifests, the
Prometheus targets) is checked against it here, so a game added to the registry and
forgotten in one of them, or one left behind there, fails this file, naming the file.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from deploy.compile_engines import MODULES
from services.engines.registry import (
    EXTRA_GAMES_ENV,
    GAME_MODULES,
    GAMES,
    available_games,
    builtin_games,
    load_game,
    load_messages,
    register_game,
    service_name,
)
from services.runtime.topology import engine_metrics_port, engine_port, platform_ports

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = builtin_games()


def _env_name(game: str) -> str:
    return f"ENGINE_ADDR_{game.upper()}"


def test_every_listed_game_loads_with_its_messages_and_names_itself() -> None:
    assert BUILTIN == available_games() == list(GAME_MODULES)
    for name in BUILTIN:
        assert load_game(name).name == name
        assert load_messages(name).view.DESCRIPTOR.full_name.startswith("cultists.v1.")
    with pytest.raises(KeyError):
        load_game("chess")


def test_local_ports_are_the_registry_s_and_never_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in BUILTIN:
        monkeypatch.delenv(f"ENGINE_PORT_{name.upper()}", raising=False)
        monkeypatch.delenv(f"ENGINE_METRICS_PORT_{name.upper()}", raising=False)
        assert (engine_port(name), engine_metrics_port(name)) == (GAMES[name].port, GAMES[name].metrics_port)
    ports = [use.port for use in platform_ports(BUILTIN, ["sweeps", "tables", "tunes"], prometheus=True)]
    assert len(ports) == len(set(ports)), ports


def test_the_compile_list_is_every_game_s_hot_modules() -> None:
    games = {m.split("/")[2] for m in MODULES if m.startswith("services/engines/") and m.count("/") == 3}
    assert games - {"core"} == set(BUILTIN)
    for name in BUILTIN:
        folder = GAMES[name].module.replace(".", "/")
        assert {f"{folder}/{part}.py" for part in ("rules", "cards", "bots")} <= set(MODULES), name


def test_pyproject_packages_each_game_s_build() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    games = {
        key.rpartition(".")[2]
        for key in data
        if key.startswith("services.engines.") and key != "services.engines.core"
    }
    assert games == set(BUILTIN), "pyproject.toml [tool.setuptools.package-data]"
    for name in BUILTIN:
        assert set(data[GAMES[name].module]) >= {"*.so", "*.pxd"}, name


def test_pyproject_packages_every_compiled_module() -> None:
    """Each module deploy/compile_engines.py builds has its package's `*.so` in the wheel
    (and its `*.pxd`, where it has one): a wheel without the `.so` runs that module from
    its source, and one without the `.pxd` every module (the hash built.json records of
    the module covers its `.pxd`, so the build counts as stale)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for module in MODULES:
        package = module.rpartition("/")[0].replace("/", ".")
        wanted = {"*.so"} | ({"*.pxd"} if (ROOT / module).with_suffix(".pxd").exists() else set())
        assert wanted <= set(data.get(package, [])), f"{module}: {package} in package-data"


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_serves_each_game_and_points_every_client_at_it() -> None:
    services = _compose()["services"]
    engines = {name for name in services if name.startswith("engine-")}
    assert engines == {service_name(g) for g in BUILTIN}, "docker-compose.yml engine services"
    for name in BUILTIN:
        service = services[service_name(name)]
        assert service["command"][:3] == ["cultists", "serve", name]
        assert f"{name}=127.0.0.1:50051" in service["healthcheck"]["test"]
        assert service["environment"][_env_name(name)] == f"{service_name(name)}:50051"
        assert service_name(name) in services["gateway"]["depends_on"], "the gateway waits for it"
    for part, service in services.items():  # no client is pointed at a game that is gone
        named = {k for k in service.get("environment") or {} if k.startswith("ENGINE_ADDR_")}
        assert named in (set(), {_env_name(g) for g in BUILTIN}), part


def _k8s_docs() -> list[tuple[Path, dict]]:
    k8s = ROOT / "deploy" / "k8s"
    files = sorted(p for p in k8s.rglob("*.yaml") if p.name != "kustomization.yaml")
    return [(p, d) for p in files for d in yaml.safe_load_all(p.read_text()) if d]


def test_kubernetes_runs_each_game_s_engine_and_lets_the_platform_reach_it() -> None:
    docs = _k8s_docs()
    deployments = {d["metadata"]["name"]: d for _, d in docs if d["kind"] == "Deployment"}
    engines = {name for name in deployments if name.startswith("engine-")}
    assert engines == {service_name(g) for g in BUILTIN}, "deploy/k8s/engines/"
    listed = yaml.safe_load((ROOT / "deploy/k8s/kustomization.yaml").read_text())["resources"]
    for name in BUILTIN:
        assert f"engines/{service_name(name)[7:]}.yaml" in listed, "deploy/k8s/kustomization.yaml"
        container = deployments[service_name(name)]["spec"]["template"]["spec"]["containers"][0]
        assert container["args"][:3] == ["cultists", "serve", name]
        kinds = {d["kind"] for _, d in docs if d["metadata"]["name"] == service_name(name)}
        assert kinds >= {"Deployment", "Service", "HorizontalPodAutoscaler"}, name
    config = next(d for p, d in docs if p.name == "config.yaml" and d["kind"] == "ConfigMap")["data"]
    assert {k: v for k, v in config.items() if k.startswith("ENGINE_ADDR_")} == {
        _env_name(g): f"{service_name(g)}:50051" for g in BUILTIN
    }, "deploy/k8s/config.yaml"
    # Every network rule that names the engines names all of them, and nothing else.
    text = (ROOT / "deploy/k8s/network.yaml").read_text()
    lists = re.findall(r"values: \[(engine-[^\]]*)\]", text)
    assert lists, "deploy/k8s/network.yaml names no engine"
    for found in lists:
        assert sorted(v.strip() for v in found.split(",")) == sorted(service_name(g) for g in BUILTIN)


def test_prometheus_scrapes_every_replica_of_each_game_s_engine() -> None:
    config = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "engines")
    (dns,) = job["dns_sd_configs"]
    assert dns["names"] == [service_name(g) for g in BUILTIN] and dns["type"] == "A" and dns["port"] == 9100
    assert {"source_labels": ["__meta_dns_name"], "target_label": "service"} in job["relabel_configs"]


def test_a_game_from_elsewhere_gets_the_next_free_ports_and_is_refused_twice() -> None:
    taken = {g.port for g in GAMES.values()} | {g.metrics_port for g in GAMES.values()}
    try:
        game = register_game("take_away_probe", "tests.games.take_away")
        assert game.port not in taken and game.metrics_port not in taken and not game.builtin
        assert register_game("take_away_probe", "tests.games.take_away") == game
        with pytest.raises(ValueError, match="already"):
            register_game("take_away_probe", "somewhere.else")
        with pytest.raises(ValueError, match="lower-case identifier"):
            register_game("Take-Away", "tests.games.take_away")
        assert "take_away_probe" not in builtin_games()
    finally:
        GAMES.pop("take_away_probe", None)
        GAME_MODULES.pop("take_away_probe", None)
    assert EXTRA_GAMES_ENV == "CULTISTS_EXTRA_GAMES"


# Modules outside the games' own packages whose code (not comments or docstrings) still
# names a game, each with why; a module not listed here that names one fails the test
# below, and so does an entry that no longer names one (so the list only shrinks).
NAMED_ELSEWHERE = {
    "services/engines/registry.py": "the one list of games",
    "services/balance/sweeps/nightly.py": "Crazy Cultists' nightly suite plays its 2-player sweep variant (CC-2)",
    "services/balance/sweeps/night.py": "an example in an error message",
    "services/gateway/openapi.py": "the API description's prose",
    "services/gateway/lobby_api.py": "an OpenAPI example body",
    "services/gateway/matchmaking_api.py": "an OpenAPI example body",
    "services/gateway/sweeps_api.py": "an OpenAPI example body",
    "services/gateway/tunes_api.py": "an OpenAPI example body",
    "services/gateway/cards_api.py": "an OpenAPI example body",
}


def _code_strings(path: Path) -> list[str]:
    """Every string constant and name of a module's code, docstrings left out."""
    import ast

    tree = ast.parse(path.read_text(), str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.append(node.value)
        elif isinstance(node, ast.Name):
            out.append(node.id)
        elif isinstance(node, ast.Attribute):
            out.append(node.attr)
        elif isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
        elif isinstance(node, ast.alias):
            out.append(node.name)
    return out


def test_no_module_outside_a_game_s_package_names_a_game_unless_listed() -> None:
    words = [*BUILTIN, *(load_game(g).title for g in BUILTIN)]
    own = tuple(f"{GAMES[g].module.replace('.', '/')}/" for g in BUILTIN)
    naming = set()
    for path in sorted([*ROOT.glob("services/**/*.py"), *ROOT.glob("workers/**/*.py")]):
        rel = str(path.relative_to(ROOT))
        if rel.startswith(own):
            continue
        if any(word in text for text in _code_strings(path) for word in words):
            naming.add(rel)
    assert naming - set(NAMED_ELSEWHERE) == set(), "these modules name a game: use the registry"
    assert set(NAMED_ELSEWHERE) - naming == set(), "these no longer name a game: drop them from the list"
