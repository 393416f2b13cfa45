# One image for every service (engines, gateway, workers): the command picks the role.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY protos ./protos
RUN pip install --no-cache-dir "grpcio-tools>=1.70,<2" "mypy-protobuf>=3.6" \
 && mkdir -p gen \
 && python -m grpc_tools.protoc -Iprotos --python_out=gen --grpc_python_out=gen protos/cultists/v1/*.proto \
 && touch gen/cultists/__init__.py gen/cultists/v1/__init__.py
COPY services ./services
COPY workers ./workers
# The engines' hot modules compiled by Cython from the same .py files (make install does the
# same); the wheel carries the built .so beside each .py. Without a compiler the script says
# so in one line and the image runs the interpreted source.
COPY deploy/compile_engines.py ./deploy/compile_engines.py
RUN (apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null \
     && pip install --no-cache-dir "cython>=3.0" setuptools) || echo "no C compiler: engines stay interpreted" \
 && python deploy/compile_engines.py
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
# The multiprocess metrics folder the gateway and workers are pointed at
# (PROMETHEUS_MULTIPROC_DIR): prometheus-client never creates it, and a process that
# writes a metric into a missing folder fails. Compose and Kubernetes mount a fresh one
# over it; it exists here too so a plain `docker run` works.
# /data is the platform's data folder in compose and Kubernetes (CULTISTS_DATA: stored
# nights, per-game records, beat's schedule); owned here so a fresh named volume mounted
# over it starts out writable by the app's user.
RUN useradd --create-home cultist \
 && mkdir -p /tmp/prometheus /data && chown cultist:cultist /tmp/prometheus /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
WORKDIR /app
COPY deploy/gunicorn.conf.py /app/deploy/gunicorn.conf.py
USER cultist
ENV PYTHONUNBUFFERED=1
CMD ["cultists", "--help"]
