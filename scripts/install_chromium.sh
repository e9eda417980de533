#!/usr/bin/env bash
# Installs Debian's Chromium (used by the browser suite, tests/browser/) when
# /usr/bin/chromium is missing. Needs root (CI and the dev machines run as root).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists first: on a fresh machine apt knows no packages yet.
apt-get update
apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version
