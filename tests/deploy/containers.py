"""The image and its containers, without a container engine (none runs on these machines).

`build_image()` follows the Dockerfile instruction by instruction: the build stage's RUN
lines run as written (protoc into gen/, then `pip wheel` of the project and its
dependencies) in a copy of what its COPY lines copy; the final stage installs those wheels
into a fresh virtualenv outside the checkout and lays out its file system (the folders its
RUN lines make, the files its COPY lines put under /app). An instruction it does not know
fails loudly, so a Dockerfile change cannot slip past the test unseen. What COPY copies
leaves out what .dockerignore names, as `docker build` does. The result is cached under
/var/tmp by a hash of everything the build reads, like a layer cache (the last few
images are kept, so worktrees that share the machine do not rebuild each other's away).

A source change rebuilds, but like an incremental build, not from nothing: the build
stage's file system (its virtualenv with the build tools, its /src) stays between builds
and each COPY brings it in line with the checkout, writing a changed file with a fresh
modification time and leaving an unchanged one alone. The engines' build stage compiles
only the modules whose source changed: compile_engines.py copies the others in from its
per-module cache outside any tree (~/.cache/cultists/engines, which `make install` has
filled from the checkout: the same sources, Cython and compiler name the same entries),
and where that cache is off, Cython's and setuptools' own up-to-date checks see the
unchanged modules built already. The dependency wheels an earlier build made are offered to pip
(PIP_FIND_LINKS, as a wheel cache would), and the virtualenv of an earlier image with the
very same dependency wheels is reused with only the project's wheel reinstalled. Builds
take a lock, so two test runs on one machine never share a half-built image.

`Container` runs one service from that image: a file system of its own (the image's
/app, a fresh world-writable /tmp, fresh mounts and named volumes, bind-mounted folders
copied in), the image's ENV plus the service's environment and nothing of the test's, the
image's working directory, and (when the test runs as root) an unprivileged user.
`prometheus_image()` is the third-party prom/prometheus image as this machine can have
it: Debian's `prometheus` binary as its entrypoint, its working directory and user. `Network` stands for the container network: each
(service, container port) gets a free loopback port, and `name:port` references to other
services, `0.0.0.0` binds and the service's own ports are rewritten accordingly; a
Prometheus config's DNS discovery of a service name finds that one loopback address.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from services.runtime.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("/var/tmp/cultists-image-test")
CONTAINER_PATHS = ("/app", "/tmp", "/data")  # absolute paths that live inside a container
BUILD_INPUTS = (
    "Dockerfile", ".dockerignore", "pyproject.toml", "README.md", "protos", "services", "workers", "deploy",
)  # fmt: skip
KEEP_IMAGES = 3  # images kept in the cache, the most recently used
# The secrets docker-compose.yml has no default for (docs/security.md): set to these for
# `docker-compose config` in the tests.
COMPOSE_SECRETS = {
    "REDIS_PASSWORD": "redis-secret-for-tests",
    "GRAFANA_ADMIN_PASSWORD": "grafana-secret-for-tests",
}


def _ignore_patterns() -> list[re.Pattern]:
    """.dockerignore's patterns as regular expressions over context-relative paths."""
    path = ROOT / ".dockerignore"
    lines = path.read_text().splitlines() if path.exists() else []
    patterns = []
    for line in (x.strip() for x in lines):
        if not line or line.startswith("#"):
            continue
        assert not line.startswith("!"), f".dockerignore exceptions ({line}) are not followed here: teach it"
        parts = re.split(r"(\*\*/?|\*|\?)", line.strip("/"))
        regex = "".join(
            {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
            for part in parts
        )
        patterns.append(re.compile(regex))
    return patterns


def _context_files(source: Path, ignored: list[re.Pattern]) -> list[Path]:
    """The files under `source` that `docker build` sends (a path or a parent of it
    matching a .dockerignore pattern is left out)."""
    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
    out = []
    for file in files:
        rel = file.relative_to(ROOT).parts
        prefixes = ["/".join(rel[: i + 1]) for i in range(len(rel))]
        if not any(p.fullmatch(prefix) for p in ignored for prefix in prefixes):
            out.append(file)
    return out


def _sync(source: Path, dest: Path, ignored: list[re.Pattern]) -> None:
    """COPY `source` to `dest` over what an earlier build left there: files the context
    lacks go, except what the build made from a file it has (a module's .c and .so);
    a new or changed file is written with a fresh modification time, so make-like
    tools rebuild from it; an unchanged one is left as it is."""
    wanted = {
        f.relative_to(source) if source.is_dir() else Path(): f for f in _context_files(source, ignored)
    }
    if source.is_dir() and dest.is_dir():
        sources = {str(rel) for rel in wanted}
        for old in sorted(p for p in dest.rglob("*") if p.is_file() or p.is_symlink()):
            rel = old.relative_to(dest)
            module = str(rel.with_name(rel.name.split(".")[0] + ".py"))
            if str(rel) not in sources and not (rel.suffix in (".c", ".so") and module in sources):
                old.unlink()
    elif dest.is_dir() != source.is_dir() and dest.exists():
        shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
    for rel, file in wanted.items():
        out = dest / rel
        data = file.read_bytes()
        if out.is_file() and out.read_bytes() == data:
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        out.chmod(file.stat().st_mode & 0o777)


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    CACHE.mkdir(parents=True, exist_ok=True)
    CACHE.chmod(0o755)
    with open(CACHE / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def _instructions(dockerfile: Path) -> list[list[tuple[str, str]]]:
    """Stages of (INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word.upper() == "FROM":
            stages.append([])
        stages[-1].append((word.upper(), rest.strip()))
    return stages


def image_python() -> str:
    """A Python 3.11 (the image's) that an unprivileged user may run: the test's own may
    live somewhere private (pyenv under /root), and a virtualenv only links to it."""
    for candidate in ("/usr/local/bin/python3.11", "/usr/bin/python3.11", sys.executable):
        real = Path(candidate).resolve()
        if real.exists() and all(os.stat(p).st_mode & 0o005 == 0o005 for p in [real, *real.parents]):
            return candidate
    raise AssertionError("no Python 3.11 that every user may run: install python3.11")


def _fingerprint() -> str:
    digest = hashlib.sha256(image_python().encode())
    ignored = _ignore_patterns()
    for name in BUILD_INPUTS:
        path = ROOT / name
        if not path.exists():
            continue
        for file in _context_files(path, ignored):
            digest.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:20]


@dataclass
class Image:
    root: Path  # holds fs/ (the image's own files) and the wheels
    env: dict[str, str]
    workdir: str
    user: str
    venv: Path | None = None  # the installed wheels (see _final_run_step)
    entrypoint: list[str] = field(default_factory=list)  # ENTRYPOINT: a service's command follows it

    @property
    def bin(self) -> Path:
        assert self.venv is not None
        return self.venv / "bin"


def build_image(log: Callable[[str], None] = print) -> Image:
    with _build_lock():
        return _build_image(log)


def _build_image(log: Callable[[str], None]) -> Image:
    key = _fingerprint()
    root = CACHE / key
    stages = _instructions(ROOT / "Dockerfile")
    final = stages[-1]
    env = {k: v for word, rest in final if word == "ENV" for k, _, v in [rest.partition("=")]}
    workdir = next((rest for word, rest in reversed(final) if word == "WORKDIR"), "/")
    user = next((rest for word, rest in reversed(final) if word == "USER"), "root")
    image = Image(root, env, workdir, user)
    if (root / "done").exists():
        image.venv = Path((root / "done").read_text())
        root.touch()  # recently used
        mark = image.venv / "project-wheel"
        if not mark.exists() or mark.read_text() != key:  # another image's wheel since
            _install_own_wheel(image, [str(w) for w in (root / "wheels").glob("cultists-*.whl")], key, log)
        return image
    shutil.rmtree(root, ignore_errors=True)  # a build that failed half-way
    images = sorted(  # image roots (virtualenvs have a `done` of their own, and stay)
        (p for p in CACHE.iterdir() if (p / "done").exists() and (p / "wheels").is_dir()),
        key=lambda p: p.stat().st_mtime,
    )
    for old in images[: max(0, len(images) - KEEP_IMAGES + 1)]:  # dependency wheels and virtualenvs stay
        shutil.rmtree(old)
    root.mkdir()
    known_wheels = CACHE / "dependency-wheels"
    known_wheels.mkdir(exist_ok=True)
    pip_config = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True
    ).stdout.split()
    build = CACHE / "build"  # the build stage's file system, kept between builds (see above)
    wheels = root / "wheels"
    if not (build / "venv" / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(build / "venv")], check=True)
    ignored = _ignore_patterns()
    copies = _copy_targets(stages[0])
    cwd = build / "ctx"
    for word, rest in stages[0]:
        if word == "FROM":
            continue
        if word == "WORKDIR":
            cwd = build / rest.lstrip("/")
            cwd.mkdir(parents=True, exist_ok=True)
            _forget_earlier_runs(cwd, copies, build)
        elif word == "COPY":
            for source, dest in _copies(rest, cwd):
                _sync(ROOT / source, dest, ignored)
        elif word == "RUN":
            command = rest.replace("/wheels", str(wheels))
            log(f"build: RUN {command[:120]}")
            path = f"{build / 'venv' / 'bin'}:{os.environ['PATH']}"
            links = " ".join([*pip_config, str(known_wheels)])
            env = {**os.environ, "PATH": path, "PIP_FIND_LINKS": links}
            subprocess.run(["bash", "-c", command], cwd=cwd, env=env, check=True)
        else:
            raise AssertionError(f"the image test cannot follow the build stage's {word}: teach it")
    for wheel in wheels.glob("*.whl"):
        if not wheel.name.startswith("cultists-"):
            shutil.copy(wheel, known_wheels)

    fs = root / "fs"
    (fs / workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
    for word, rest in final:
        if word in ("FROM", "ENV", "WORKDIR", "USER", "CMD"):
            continue
        if word == "COPY" and rest.startswith("--from="):
            continue  # the wheels: already in root/wheels
        if word == "COPY":
            source, target = rest.split()
            dest = fs / target.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / source, dest)
        elif word == "RUN":
            for step in (s.strip() for s in rest.split("&&")):
                _final_run_step(step, image, wheels, fs, log)
        else:
            raise AssertionError(f"the image test cannot follow the final stage's {word}: teach it")
    assert image.venv is not None, "the final stage installs no wheels"
    subprocess.run(["chmod", "-R", "a+rX", str(root), str(image.venv)], check=True)
    (root / "done").write_text(str(image.venv))
    return image


def _forget_earlier_runs(cwd: Path, copies: set[Path], build: Path) -> None:
    """Remove what earlier builds' RUNs made in the WORKDIR (gen/, egg-info, the wheel's
    build/lib), so that nothing of them reaches this build's wheel. Kept: setuptools'
    per-platform folders of the engines' extension build (build/lib.<platform>,
    build/temp.<platform>), which `pip wheel` of the project never reads (it has no
    extension modules of its own) and where build_ext looks to see that a module is up
    to date (it builds there and copies the result in place)."""
    for old in cwd.iterdir():
        if old.relative_to(build) in copies:
            continue
        if old.name == "build" and old.is_dir():
            for inner in old.iterdir():
                if not (inner.is_dir() and inner.name.startswith(("lib.", "temp."))):
                    shutil.rmtree(inner) if inner.is_dir() else inner.unlink()
        else:
            shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()


def _copies(rest: str, cwd: Path) -> list[tuple[str, Path]]:
    """(context path, destination) of one COPY instruction."""
    *sources, target = rest.split()
    into = target.endswith("/") or len(sources) > 1  # COPY a b ./ copies into a folder
    return [(s, cwd / target / Path(s).name if into else cwd / target) for s in sources]


def _copy_targets(stage: list[tuple[str, str]]) -> set[Path]:
    """The top-level entries of the build stage's WORKDIR that its COPYs write."""
    out: set[Path] = set()
    cwd = Path("ctx")
    for word, rest in stage:
        if word == "WORKDIR":
            cwd = Path(rest.lstrip("/"))
        elif word == "COPY":
            for _source, dest in _copies(rest, cwd):
                out.add(cwd / dest.relative_to(cwd).parts[0])
    return out


def _install_own_wheel(image: Image, own: list[str], key: str, log: Callable[[str], None]) -> None:
    """The project's wheel into the image's virtualenv (shared by images whose dependency
    wheels are the same), marked with the image it came from."""
    log("image: dependencies as in an earlier image; installing the project's wheel")
    assert own, "the build made no cultists wheel"
    subprocess.run(
        [str(image.bin / "pip"), "install", "-q", "--no-deps", "--force-reinstall", *own], check=True
    )
    (image.venv / "project-wheel").write_text(key)  # type: ignore[operator]


def _final_run_step(step: str, image: Image, wheels: Path, fs: Path, log: Callable[[str], None]) -> None:
    words = shlex.split(step)
    if words[:1] == ["useradd"]:
        return  # the image's user: played by an unprivileged user of this machine
    if words[:2] == ["mkdir", "-p"]:
        for path in words[2:]:
            (fs / path.lstrip("/")).mkdir(parents=True, exist_ok=True)
        return
    if words[:1] == ["chown"]:
        return  # folders the image's user owns: handed to the run user by Container
    if words[:2] == ["rm", "-rf"] and all(w == "/wheels" for w in words[2:]):
        return
    if words[:2] == ["pip", "install"]:
        args = [str(wheels / w[len("/wheels/") :]) if w.startswith("/wheels/") else w for w in words[2:]]
        wheel_files = []
        for arg in args:
            wheel_files += sorted(Path(arg).parent.glob(Path(arg).name)) if "*" in arg else [arg]
        # A virtualenv per set of dependency wheels, like a layer cache keyed on them: the
        # same wheels install the same packages, so only the project's own wheel changes.
        deps = sorted(Path(w).name for w in wheel_files if not Path(w).name.startswith("cultists-"))
        key = hashlib.sha256("\n".join([image_python(), *deps]).encode()).hexdigest()[:20]
        image.venv = CACHE / f"venv-{key}"
        own = [str(w) for w in wheel_files if Path(w).name.startswith("cultists-")]
        if (image.venv / "done").exists():
            _install_own_wheel(image, own, image.root.name, log)
            return
        shutil.rmtree(image.venv, ignore_errors=True)
        subprocess.run([image_python(), "-m", "venv", str(image.venv)], check=True)
        log(f"image: pip install {len(wheel_files)} wheels into a fresh virtualenv")
        subprocess.run([str(image.bin / "pip"), "install", "-q", *map(str, wheel_files)], check=True)
        (image.venv / "done").write_text(key)
        (image.venv / "project-wheel").write_text(image.root.name)
        return
    raise AssertionError(f"the image test cannot follow `RUN {step}`: teach it")


def prometheus_image() -> Image:
    """prom/prometheus (ENTRYPOINT /bin/prometheus, WORKDIR /prometheus, USER nobody) with
    Debian's `prometheus` binary in place of the image's own build; its file system holds
    only the working directory, where the TSDB goes (`data/`) unless a flag says otherwise.
    Debian patches that default to /var/lib/prometheus/metrics2, so the entrypoint says
    upstream's default out loud."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is not installed: `make install` (deploy/system-packages.sh) installs it"
    root = CACHE / "prometheus-image"
    (root / "fs" / "prometheus").mkdir(parents=True, exist_ok=True)
    subprocess.run(["chmod", "-R", "a+rX", str(CACHE)], check=True)
    return Image(root, {}, "/prometheus", "nobody", entrypoint=[binary, "--storage.tsdb.path=data/"])


def run_user() -> tuple[int, int] | None:
    """(uid, gid) to run containers as: none when the test is not root (it already isn't)."""
    if os.getuid() != 0:
        return None
    nobody = pwd.getpwnam("nobody")
    return nobody.pw_uid, nobody.pw_gid


class Network:
    """Loopback stand-in for the container network: service names resolve to 127.0.0.1
    and each (service, container port) to a free port of its own."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)
        self.ports: dict[tuple[str, int], int] = {}

    def claim(self, service: str, texts: Iterable[str]) -> None:
        """Give `service` a free port for each port number it names as its own (every
        4-5 digit number in its command, environment and health check that is not part
        of a reference to another service)."""
        names = "|".join(map(re.escape, self.names))
        for text in texts:
            text = re.sub(rf"(?<![\w.-])({names}):(\d+)", "", text)
            for number in re.findall(r"(?<![\d.])(\d{4,5})(?![\d.])", text):
                self.port(service, int(number))

    def port(self, service: str, port: int) -> int:
        if (service, port) not in self.ports:
            self.ports[service, port] = free_port()
        return self.ports[service, port]

    def resolve_dns_sd(self, text: str) -> str:
        """A Prometheus config's DNS discovery as this network answers it: a service name's
        A records are its one loopback address, given with the meta label DNS discovery
        sets (`__meta_dns_name`), so the job's relabelling reads what it would in compose."""
        config = yaml.safe_load(text)
        for job in config.get("scrape_configs", []):
            for dns in job.pop("dns_sd_configs", []):
                assert dns.get("type", "SRV") == "A", f"only A-record discovery is stood in for: {dns}"
                job.setdefault("static_configs", []).extend(
                    {"targets": [f"127.0.0.1:{self.port(n, dns['port'])}"], "labels": {"__meta_dns_name": n}}
                    for n in dns["names"]
                )
        return yaml.safe_dump(config, sort_keys=False)

    def rewrite(self, service: str, text: str, root: Path, paths: Iterable[str] = CONTAINER_PATHS) -> str:
        """`text` as seen from outside: other services' addresses, this one's own ports
        and binds, and container paths (`paths`, the longest first) mapped to where they
        are on this machine."""
        names = "|".join(sorted(map(re.escape, self.names), key=len, reverse=True))

        def other(m: re.Match) -> str:
            return f"127.0.0.1:{self.port(m.group(1), int(m.group(2)))}"

        text = re.sub(rf"(?<![\w.-])({names}):(\d+)", other, text)
        own = {p for (s, p) in self.ports if s == service}
        for port in own:
            text = re.sub(rf"(?<![\d.]){port}(?!\d)", str(self.ports[service, port]), text)
        text = text.replace("0.0.0.0", "127.0.0.1")
        for prefix in sorted(paths, key=len, reverse=True):
            text = re.sub(rf"(?<![\w/.]){prefix}(?=/|$|\s|')", str(root) + prefix, text)
        return text


@dataclass
class Container:
    image: Image
    name: str
    argv: list[str]
    env: dict[str, str]
    network: Network
    home: Path
    mounts: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)  # compose's "source:target[:mode]"
    proc: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        self.root = self.home / self.name
        shutil.copytree(self.image.root / "fs", self.root, symlinks=True)
        os.chmod(self.root, 0o755)
        (self.root / "tmp").mkdir(exist_ok=True)
        os.chmod(self.root / "tmp", 0o1777)
        (self.root / "home").mkdir()
        (self.root / "data").mkdir(exist_ok=True)  # the image makes /data (the Dockerfile)
        user = run_user()
        fresh = list(self.mounts)  # tmpfs / emptyDir: fresh and writable
        named: list[tuple[str, str]] = []  # a named volume: one folder every container shares
        binds: list[tuple[str, str]] = []  # a host folder: its files, read-only
        for volume in self.volumes:
            source, target = volume.split(":")[:2]
            if source.startswith("/"):
                binds.append((source, target))
            else:
                named.append((source, target))
        self.paths = (*CONTAINER_PATHS, *fresh, *(t for _s, t in named), *(t for _s, t in binds))
        for mount in fresh:
            path = self.root / mount.lstrip("/")
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            os.chmod(path, 0o1777)
        for source, target in named:
            shared = self.home / "volumes" / source
            shared.mkdir(parents=True, exist_ok=True)
            os.chmod(shared, 0o1777)
            path = self.root / target.lstrip("/")
            shutil.rmtree(path, ignore_errors=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(shared, target_is_directory=True)
        for source, target in binds:
            self._bind(Path(source), self.root / target.lstrip("/"))
        if user is not None:
            for owned in ("home", "data", "tmp/prometheus"):
                if (self.root / owned).exists():
                    os.chown(self.root / owned, *user)

    def _bind(self, source: Path, dest: Path) -> None:
        """A bind-mounted folder, copied in as seen from this network: every `service:port`
        its files name resolves as the container's would (loopback, the remapped port).
        Nothing else in it changes."""
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            out = dest / file.relative_to(source)
            out.parent.mkdir(parents=True, exist_ok=True)
            text = file.read_text()
            if file.suffix in (".yml", ".yaml") and "dns_sd_configs" in text:
                text = self.network.resolve_dns_sd(text)
            out.write_text(self.network.rewrite(self.name, text, self.root, paths=()))
        subprocess.run(["chmod", "-R", "a+rX", str(dest)], check=True)

    def _env(self) -> dict[str, str]:
        venv = f"{self.image.bin}:" if self.image.venv is not None else ""
        base = {
            "PATH": f"{venv}/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.root / "home"),
            "HOSTNAME": os.uname().nodename,  # what Celery names its node after
            "LANG": "C.UTF-8",
        }
        given = {k: self.network.rewrite(self.name, v, self.root, self.paths) for k, v in self.env.items()}
        return {**base, **self.image.env, **given}

    def command(self, argv: list[str]) -> list[str]:
        return [self.network.rewrite(self.name, a, self.root, self.paths) for a in argv]

    def _popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        user = run_user()
        extra = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
        cwd = self.root / self.image.workdir.lstrip("/")
        return subprocess.Popen(self.command(argv), env=self._env(), cwd=cwd, **extra, **kwargs)

    def start(self, log: Path) -> None:
        self.log = log
        self.proc = self._popen(
            [*self.image.entrypoint, *self.argv],
            stdout=open(log, "wb"),  # noqa: SIM115 - the child holds it; closed when it exits
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def exec(self, argv: list[str], timeout: float = 30) -> int:
        """Like `docker exec`: a command in the container's environment."""
        proc = self._popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return -1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 9)


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return 200 <= reply.status < 400
    except OSError:
        return False


def grpc_serving(port: int, service: str = "") -> bool:
    """What a Kubernetes grpc probe asks: the standard health service, for `service`."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=3
            )
        except grpc.RpcError:
            return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def compose_config(env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`docker-compose config` of the project, with COMPOSE_SECRETS set (or `env` instead)."""
    tool = shutil.which("docker-compose")
    assert tool, "docker-compose is not installed: `make install` (deploy/system-packages.sh) installs it"
    environ = {k: v for k, v in os.environ.items() if k not in COMPOSE_SECRETS}
    return subprocess.run(
        [tool, "-f", "docker-compose.yml", "config"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**environ, **(COMPOSE_SECRETS if env is None else env)},
    )  # fmt: skip
