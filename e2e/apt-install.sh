#!/usr/bin/env bash
# Helpers for the e2e scripts that set up the tests' system peers.

# peer_outcome WHAT: what a missing peer means for WHAT in this run, as
# internal/peer decides it (CI=true or NANOBOT_REQUIRE_PEERS=1: the tests fail).
peer_outcome() {
  local v
  for v in "${NANOBOT_REQUIRE_PEERS:-}" "${CI:-}"; do
    case "${v,,}" in
    1 | true | yes | on)
      echo "$1 going to FAIL (peers are required under CI=true or NANOBOT_REQUIRE_PEERS=1)"
      return ;;
    esac
  done
  echo "$1 SKIPPED (they fail instead under CI=true or NANOBOT_REQUIRE_PEERS=1)"
}

# apt_install PACKAGE WHAT: installs an apt package a test suite needs, for
# e2e/chromium.sh, e2e/dovecot.sh and e2e/bwrap.sh. Never fails the build: where it cannot
# install (no apt, no root and no password-less sudo, offline) it warns that $pkg is
# missing and what it means for WHAT, and returns 0: the tests are what fail (under
# CI=true or NANOBOT_REQUIRE_PEERS=1) or skip with a WARNING of their own (elsewhere).
apt_install() {
  local pkg="$1" what="$2" sudo log outcome
  outcome="$(peer_outcome "$what")"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "WARNING: $pkg is missing and there is no apt-get: $outcome (install $pkg by hand)"
    return 0
  fi
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "WARNING: $pkg is missing, and installing it needs root (sudo asks for a password): $outcome (run: sudo apt-get install $pkg)"
    return 0
  fi
  log="${TMPDIR:-/tmp}/nanobot-$pkg-install.log"
  echo "$pkg: installing the apt package (a few minutes the first time)…"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$pkg"; } >"$log" 2>&1; then
    echo "WARNING: $pkg is missing: apt-get install $pkg failed (see $log): $outcome"
    return 0
  fi
  echo "$pkg: installed"
}
