# syntax=docker/dockerfile:1
# Build: make docker (or docker build --build-arg VERSION=$(cat VERSION) --build-arg COMMIT=$(git describe --always) -t ctxc .)
#        make image builds the same image without Docker or base images (internal/imagebuild,
#        whose test compares its settings with this file's final stage).
# Run:   the image listens on 0.0.0.0, so ctxc serve refuses to start without TLS or tokens
#        unless told it may serve in the open (README, "Running it safely"):
#          docker run -p 50051:50051 -v /srv/ctxc:/etc/ctxc:ro \
#            -e CTXC_TLS_CERT=/etc/ctxc/tls.crt -e CTXC_TLS_KEY=/etc/ctxc/tls.key \
#            -e CTXC_AUTH_TOKEN_FILE=/etc/ctxc/tokens ctxc
#          docker run -p 50051:50051 -e CTXC_INSECURE=true ctxc   # trusted networks only

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# The same flags as `make build` (see the Makefile for grpcnotrace).
RUN CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/ctxc ./cmd/ctxc

# Static binary on distroless: no shell, no package manager, runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ctxc /ctxc
# Inside a container the server must accept connections from outside it;
# `ctxc health` reads the same variables and probes 127.0.0.1 on that port
# (over TLS when CTXC_TLS_CERT is set). Reflection is off in the image (it
# maps the API for whoever reaches the port; CTXC_REFLECTION=true turns it
# on), and SIGTERM drains for 5s before the port closes.
ENV CTXC_LISTEN=0.0.0.0:50051 \
    CTXC_LOG_FORMAT=json \
    CTXC_REFLECTION=false \
    CTXC_DRAIN_DELAY=5s
EXPOSE 50051
USER nonroot:nonroot
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["/ctxc", "health"]
ENTRYPOINT ["/ctxc"]
CMD ["serve"]
