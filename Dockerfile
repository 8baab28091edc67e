# The sandboxd daemon's image, for the compose deployment (docker-compose.yml).
#
# Two stages on the same Debian 12 base: the first builds build/sandboxd
# (and the static in-sandbox supervisor, build/sandboxd-init, which
# scripts/build-image puts into the sandbox image) from this checkout; the
# second holds the daemon and the web console's files (build/console, built
# on the host beforehand) with only the daemon's runtime libraries, curl
# for the health check, and the CA bundle that pushes and imports trust.
#
# BASE is debian:bookworm-slim where an image registry is reachable; where
# none is, install.sh passes the local Debian root filesystem that
# scripts/build-image makes with debootstrap (its apt sources are the
# machine's own), so nothing is pulled.  Packages come from the base's
# apt sources.
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS build
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        build-essential pkg-config libmicrohttpd-dev libjansson-dev \
        libcurl4-gnutls-dev libsqlite3-dev libsodium-dev libgit2-dev \
        libyaml-dev libhttp-parser-dev libnftables-dev libarchive-dev \
        zlib1g-dev libbrotli-dev >/dev/null && \
    rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY src ./src
ARG JOBS=2
RUN make -s -j"${JOBS}" all

FROM ${BASE}
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        libmicrohttpd12 libjansson4 libcurl3-gnutls libsqlite3-0 libsodium23 \
        libgit2-1.5 libyaml-0-2 libhttp-parser2.9 libnftables1 libarchive13 \
        zlib1g libbrotli1 \
        ca-certificates curl >/dev/null && \
    rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/sandboxd /usr/local/bin/sandboxd
COPY --from=build /src/build/sandboxd-init /usr/local/lib/sandboxd/sandboxd-init
# The web console, built on the host from its lockfile (install.sh and
# upgrade.sh run npm there, with the machine's own npm registry and CAs).
COPY build/console /usr/local/share/sandboxd/console
# The environment wins over .env, where SANDBOXD_CONSOLE_DIR is empty.
ENV SANDBOXD_CONSOLE_DIR=/usr/local/share/sandboxd/console
ARG GIT_COMMIT=unknown
LABEL sandboxd.image=daemon sandboxd.commit=${GIT_COMMIT}
# Root: the daemon drives the host's dockerd through its socket and
# installs nftables rules (docker-compose.yml says why each is needed).
ENTRYPOINT ["/usr/local/bin/sandboxd"]
CMD ["serve"]
