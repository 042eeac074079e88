# cargod and cargoctl in an image with nothing else: static binaries on
# distroless, run as a user without privileges. Build: docker build -t cargostream .

# golang:1.26 is the newest 1.26 release; go.mod asks for 1.26.8 or later and
# the image does not fetch toolchains, so an older local copy fails the
# build: docker compose build --pull.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, in their own layer, so that a change of the code does not
# download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version the binaries say they are (cargod --version, its start log,
# cargo_build_info): .dockerignore leaves .git out, so the Go toolchain
# cannot read it from the checkout. docker build --build-arg
# VERSION=$(git describe --tags --always --dirty) stamps the commit.
ARG VERSION=devel
# CGO_ENABLED=0: the binaries must not need a C library, which the runtime
# image does not have.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/cargostream/cargostream/internal/version.stamped=${VERSION}" \
    -o /out/ ./cmd/cargod ./cmd/cargoctl

# static (not base): no C library is needed; the image still has CA
# certificates (webhooks to https) and the user nonroot (uid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cargod /out/cargoctl /usr/local/bin/
USER nonroot:nonroot
# nonroot's home is writable: without CARGO_NATS_URL the embedded server
# keeps its files in ./data here (mount a volume on /home/nonroot/data).
WORKDIR /home/nonroot
# cargod listens on loopback by default, which nothing outside a container
# can reach. Off loopback demo mode is off unless CARGO_DEMO=true: its
# credentials are public.
ENV CARGO_ADDR=:8080
EXPOSE 8080
# The image has no shell, curl or wget: cargoctl health makes the request,
# to CARGO_ADDR's port on loopback (it follows a changed CARGO_ADDR).
# Replaying a long stream at start takes a while, hence the start period.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 CMD ["cargoctl", "health"]
ENTRYPOINT ["cargod"]
