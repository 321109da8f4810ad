#!/usr/bin/env bash
# Records the `docker` family: the docker CLI (and Debian's docker-compose v1) on a
# machine with no Docker daemon, as agents often meet it, plus what the CLIs check offline.
#
# Needs: the docker CLI (28.x, without the buildx and compose plugins), docker-compose
# (Debian package docker-compose, 1.29). No daemon must be running.
# Run:   bash internal/eval/corpus/record/docker.sh
source "$(dirname "$0")/lib.sh"


unset DOCKER_HOST DOCKER_CONTEXT
if docker info >/dev/null 2>&1; then
  echo "a Docker daemon answers: these cases are about its absence" >&2; exit 1
fi

V="docker --version"
VC="docker-compose version | sed -n 1p"
P=docker-shop

# Failures
record docker ps-no-daemon $P docker "$V" -- docker ps
record docker build-no-daemon $P docker "$V" -- docker build -t shop/orders-api:dev .
record docker run-no-daemon $P docker "$V" -- docker run --rm -p 8080:8080 -e DATABASE_URL=postgres://orders:orders@127.0.0.1:5432/orders shop/orders-api:dev
record docker build-check-unknown-flag $P docker "$V" -- docker build --check .
record docker info-no-daemon $P docker "$V" -- docker info
record docker compose-invalid-file $P docker-compose "$VC" -- docker-compose config
record docker compose-up-no-daemon $P docker-compose "$VC" -- docker-compose -f docker-compose.yml up -d

# Successes
record docker compose-config-ok $P docker-compose "$VC" -- docker-compose -f docker-compose.yml config
record docker build-help-ok $P docker "$V" -- docker build --help

refresh_labels docker
