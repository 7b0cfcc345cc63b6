# Slapjack server image: one uvicorn worker (uvloop, httptools, websockets) on port 8000.
# Stages: the browser's Socket.IO client from npm and the page's bundle (esbuild); Python
# dependencies from uv.lock (their own layer, so a code change rebuilds in seconds); the
# runtime, as a non-root user.

FROM python:3.11-slim AS browser-client
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error \
    && mkdir vendor \
    && cp node_modules/socket.io-client/dist/socket.io.esm.min.js* vendor/
# The page's bundle (`make bundle`): scripts and styles named by the hash of their content.
COPY bundle.js ./
COPY static static
RUN mkdir -p static/vendor && cp vendor/socket.io.esm.min.js static/vendor/ && node bundle.js

FROM python:3.11-slim AS python-deps
# The runtime packages exactly as uv.lock pins them (versions and hashes), as `make` installs
# them; not the dev tools, not the project itself (its code is copied below).
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    UV_PROJECT_ENVIRONMENT=/opt/venv UV_PYTHON_DOWNLOADS=never UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy UV_NO_CACHE=1
RUN pip install uv==0.13.9
WORKDIR /build
COPY pyproject.toml uv.lock ./
RUN uv sync --frozen --no-install-project --python /usr/local/bin/python3

FROM python:3.11-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin slapjack \
    && mkdir /data && chown slapjack:slapjack /data
COPY --from=python-deps /opt/venv /opt/venv
WORKDIR /srv/slapjack
COPY engine engine
COPY app app
COPY templates templates
COPY static static
COPY --from=browser-client /build/vendor static/vendor
COPY --from=browser-client /build/build/assets build/assets
# The message catalogs, as `make catalogs` builds them: extract (a check that babel.cfg and
# the sources agree) and compile the .po files to the .mo the app reads.
COPY babel.cfg babel.cfg
RUN /opt/venv/bin/python -m babel.messages.frontend --quiet extract -F babel.cfg \
        -o app/locale/messages.pot . \
    && for lang in en ms; do \
        /opt/venv/bin/python -m babel.messages.frontend compile -l "$lang" \
            -i "app/locale/$lang/LC_MESSAGES/messages.po" \
            -o "app/locale/$lang/LC_MESSAGES/messages.mo" || exit 1; \
    done
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    SLAPJACK_IN_CONTAINER=true \
    SLAPJACK_STORE=sqlite:////data/slapjack.db
# Tables in progress survive a restart or a new image: mount a volume here (compose does).
VOLUME /data
USER slapjack
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
CMD ["python", "-m", "app"]
