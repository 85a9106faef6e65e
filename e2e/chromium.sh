#!/usr/bin/env bash
# Installs headless Chromium (the apt package `chromium`) for the browser
# tests when it is missing. Never fails the build: where it cannot install
# (no apt, no root and no password-less sudo, offline) it warns and exits 0,
# and the browser tests skip with a warning of their own.
set -u
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "chromium: found $(command -v "$b")"
    exit 0
  fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "WARNING: no Chromium and no apt-get: the browser tests are SKIPPED (install Chromium or Chrome by hand)"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "WARNING: no Chromium, and installing it needs root (sudo asks for a password): the browser tests are SKIPPED (run: sudo apt-get install chromium)"
  exit 0
fi
echo "chromium: installing the apt package (a few minutes the first time)…"
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; } >/tmp/nanobot-chromium-install.log 2>&1; then
  echo "WARNING: apt-get install chromium failed (see /tmp/nanobot-chromium-install.log): the browser tests are SKIPPED"
  exit 0
fi
echo "chromium: installed $(command -v chromium)"
