#!/usr/bin/env bash
# apt_install PACKAGE WHAT: installs an apt package a test suite needs, for
# e2e/chromium.sh, e2e/dovecot.sh and e2e/bwrap.sh. Never fails the build: where it cannot
# install (no apt, no root and no password-less sudo, offline) it warns that
# WHAT is skipped and returns 0; the tests skip with a warning of their own.
apt_install() {
  local pkg="$1" what="$2" sudo log
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "WARNING: no $pkg and no apt-get: $what SKIPPED (install $pkg by hand)"
    return 0
  fi
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "WARNING: no $pkg, and installing it needs root (sudo asks for a password): $what SKIPPED (run: sudo apt-get install $pkg)"
    return 0
  fi
  log="${TMPDIR:-/tmp}/nanobot-$pkg-install.log"
  echo "$pkg: installing the apt package (a few minutes the first time)…"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$pkg"; } >"$log" 2>&1; then
    echo "WARNING: apt-get install $pkg failed (see $log): $what SKIPPED"
    return 0
  fi
  echo "$pkg: installed"
}
