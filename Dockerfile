# imgwarm as a container image: build the .deb with the official Swift image,
# then install it, and only it, on debian:bookworm-slim.
#   docker build -t imgwarm .
#   docker run --rm -v imgwarm-cache:/cache -v "$PWD/manifest.txt:/m.txt:ro" imgwarm warm /m.txt
# The image runs as the unprivileged user imgwarm (uid/gid 10001; a host folder
# as /cache must be writable for it, or add --user "$(id -u):$(id -g)"); its
# cache folder is /cache (IMGWARM_CACHE), a volume in practice. scripts/test-package.sh
# checks the runtime stage without Docker: the same install script in a clean
# Debian 12 root made by mmdebstrap, then a real warm.

# Swift 6.3 on Debian 12: the .deb's Depends then name bookworm's libraries.
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
COPY . .
# Build libraries (-dev packages) and dpkg-dev, then the release build and the .deb.
RUN scripts/setup.sh --build-deps && scripts/package.sh

FROM debian:bookworm-slim
COPY --from=build /src/dist/ /tmp/dist/
COPY packaging/container/install-runtime.sh /tmp/dist/
RUN sh /tmp/dist/install-runtime.sh
ENV IMGWARM_CACHE=/cache
USER imgwarm
WORKDIR /home/imgwarm
ENTRYPOINT ["imgwarm"]
CMD ["--help"]
