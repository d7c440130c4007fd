#!/usr/bin/env bash
# Make Debian's Chromium available for the chat-page test (tests/server/test_page.py drives
# it through Playwright; Playwright's own browser download is not reachable here). Quick
# when it is already installed; safe to run twice.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium.sh: $(/usr/bin/chromium --version 2>/dev/null || echo chromium) present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "chromium.sh: /usr/bin/chromium is missing and installing it needs root" >&2
    exit 1
fi
echo "chromium.sh: installing chromium from Debian packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y chromium
echo "chromium.sh: $(/usr/bin/chromium --version)"
