# Recall server image: SQLite by default (data in the /data volume), PostgreSQL with
# RECALL_DB_URL. Non-root, no torch, nothing downloaded at run time.
#   docker build -t recall .
#   docker run --init -p 8765:8765 -v recall-data:/data recall
#   docker exec <container> recall create-token alice
# BASE: any Debian-based image with python3 (3.11+) and its venv module.
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python3 -m venv /opt/recall
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY recall_core recall_core
COPY plugins plugins
# Our packages come from this checkout, never by name from an index (README "How the
# packages are installed"); their dependencies come from PyPI. No torch.
RUN /opt/recall/bin/pip install . ./plugins/sqlite ./plugins/extractors ./plugins/embeddings \
        ./plugins/postgres \
 && /opt/recall/bin/pip uninstall -y pip \
 && if /opt/recall/bin/python -c "import torch" 2>/dev/null; then echo "torch got in" >&2; exit 1; fi

FROM ${BASE}
RUN useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin recall \
 && mkdir -p /data && chown recall:recall /data
COPY --from=build /opt/recall /opt/recall
ENV PATH=/opt/recall/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    RECALL_DB_URL=/data/recall.db \
    RECALL_HOST=0.0.0.0 \
    RECALL_PORT=8765 \
    RECALL_PUBLIC_URL=http://localhost:8765 \
    RECALL_LOG_FORMAT=json
USER recall
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD python3 -c 'import os, sys, urllib.request; sys.exit(urllib.request.urlopen("http://127.0.0.1:%s/health" % os.environ.get("RECALL_PORT", "8765"), timeout=4).status != 200)'

STOPSIGNAL SIGTERM
ENTRYPOINT ["recall"]
CMD ["serve"]
