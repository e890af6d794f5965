#!/bin/sh
# The runtime stage of the Dockerfile: installs the imgwarm .deb(s) copied to
# /tmp/dist with apt, which fetches the Depends from the Debian mirror, then
# adds the unprivileged user the image runs as and its cache folder.
# scripts/test-package.sh runs this same file in a clean Debian 12 root.
set -eu
cd /tmp/dist
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# ca-certificates: the package only recommends it, but HTTPS needs it.
apt-get install -y -q --no-install-recommends ./imgwarm_*.deb ca-certificates
apt-get clean
rm -rf /var/lib/apt/lists/* /tmp/dist
groupadd --system --gid 10001 imgwarm
useradd --system --uid 10001 --gid imgwarm --create-home --home-dir /home/imgwarm \
  --shell /usr/sbin/nologin imgwarm
install -d -o imgwarm -g imgwarm -m 0755 /cache
