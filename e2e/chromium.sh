#!/usr/bin/env bash
# Installs headless Chromium (the apt package `chromium`) for the browser
# tests when it is missing. Never fails the build: where it cannot install
# (no apt, no root and no password-less sudo, offline) it warns and exits 0,
# and the browser tests skip with a warning of their own (or fail under CI=true).
set -u
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "chromium: found $(command -v "$b")"
    exit 0
  fi
done
. "$(dirname "$0")/apt-install.sh"
apt_install chromium "the browser tests are"
