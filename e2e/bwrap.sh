#!/usr/bin/env bash
# Installs bubblewrap (the apt package `bubblewrap`) for the exec sandbox's
# tests (tools.exec.sandbox "auto", the default, and "bwrap") when it is missing. Never fails the
# build: where it cannot install it warns and exits 0, and the sandbox
# tests skip with a warning of their own (or fail under CI=true).
set -u
if command -v bwrap >/dev/null 2>&1; then
  echo "bwrap: found $(command -v bwrap)"
  exit 0
fi
. "$(dirname "$0")/apt-install.sh"
apt_install bubblewrap "the sandbox tests are"
