# cua as an OpenEnv environment (openenv.yaml): every sandbox kind's system packages and the
# pinned Python packages, installed by scripts/setup.sh as on a developer machine, then
# `cua openenv serve` on port 8000 with sandboxes in the server's process.
#
#   docker build -t cua-openenv .
#   docker run -p 8000:8000 -e CUA_OPENENV_TOKEN="$(openssl rand -hex 16)" cua-openenv
#
# Every route but /health needs the token (Authorization: Bearer TOKEN, or ?token= on /ws);
# without CUA_OPENENV_TOKEN the server generates one and prints it in the container's log.
FROM debian:12

ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/cua
COPY . .
RUN PYTHON=python3 bash scripts/setup.sh && rm -rf /var/lib/apt/lists/* /root/.cache/pip

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
    CMD curl -fsS http://localhost:8000/health || exit 1
CMD [".venv/bin/cua", "openenv", "serve", "--local", "--host", "0.0.0.0", "--port", "8000"]
