# syntax=docker/dockerfile:1
# Build: make docker (or docker build --build-arg VERSION=$(git describe --tags --always) -t ctxc .)
# Run:   docker run -p 50051:50051 ctxc

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# The same flags as `make build` (see the Makefile for grpcnotrace).
RUN CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags "-s -w -X main.version=${VERSION}" -o /out/ctxc ./cmd/ctxc

# Static binary on distroless: no shell, no package manager, runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ctxc /ctxc
# Inside a container the server must accept connections from outside it;
# `ctxc health` reads the same variable and probes 127.0.0.1 on that port.
ENV CTXC_LISTEN=0.0.0.0:50051 \
    CTXC_LOG_FORMAT=json
EXPOSE 50051
USER nonroot:nonroot
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["/ctxc", "health"]
ENTRYPOINT ["/ctxc"]
CMD ["serve"]
