# talos-reconciler's container image: built on Debian bookworm with the project's own bootstrap,
# run on bookworm-slim with only the runtime libraries, as a non-root user.
#   docker build -t talos-reconciler:0.1.0 .
# tests/docker checks that every shared library the binary needs comes from a package the
# runtime stage installs.

FROM debian:bookworm AS build
WORKDIR /src
COPY . .
# The build packages only (no test tools, no services), then the binary alone.
RUN scripts/bootstrap demo \
 && cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTR_TESTS=OFF -DTR_E2E=OFF \
 && cmake --build /build --target talos-reconciler \
 && strip --strip-debug -o /talos-reconciler /build/reconciler/talos-reconciler

FROM debian:bookworm-slim
# Runtime libraries of the binary (gRPC, protobuf, Abseil, libgit2 and yaml-cpp are linked into
# it), CA certificates (HTTPS remotes), the OpenSSH client (the ssh transport runs it) and tzdata
# (maintenance windows name time zones).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libssl3 zlib1g libgssapi-krb5-2 libspdlog1.10 libfmt9 libdate-tz3 \
      libcpp-httplib0.11 libstdc++6 libgcc-s1 libc6 \
      ca-certificates openssh-client tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 reconciler \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin reconciler \
 && install -d -o 65532 -g 65532 /var/lib/talos-reconciler
COPY --from=build /talos-reconciler /usr/local/bin/talos-reconciler
USER 65532:65532
# A read-only root filesystem works: state goes to /var/lib/talos-reconciler (a volume).
ENV HOME=/tmp
VOLUME /var/lib/talos-reconciler
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/talos-reconciler"]
CMD ["run", "--help"]
