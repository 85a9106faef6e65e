#!/usr/bin/env bash
# Installs Dovecot's IMAP server (the apt package `dovecot-imapd`) for the
# Email channel's tests when it is missing. Never fails the build: where it
# cannot install (no apt, no root and no password-less sudo, offline) it
# warns and exits 0, and the tests skip with a message of their own. The
# tests start dovecot themselves, unprivileged, with a throwaway config;
# the system service the package may start is not used.
set -u
for d in dovecot /usr/sbin/dovecot; do
  if command -v "$d" >/dev/null 2>&1; then
    echo "dovecot: found $(command -v "$d")"
    exit 0
  fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "WARNING: no dovecot and no apt-get: the Email channel's IMAP tests are SKIPPED (install dovecot-imapd by hand)"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "WARNING: no dovecot, and installing it needs root (sudo asks for a password): the Email channel's IMAP tests are SKIPPED (run: sudo apt-get install dovecot-imapd)"
  exit 0
fi
echo "dovecot: installing the apt package dovecot-imapd…"
log="${TMPDIR:-/tmp}/nanobot-dovecot-install.log"
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends dovecot-imapd; } >"$log" 2>&1; then
  echo "WARNING: apt-get install dovecot-imapd failed (see $log): the Email channel's IMAP tests are SKIPPED"
  exit 0
fi
echo "dovecot: installed $(command -v dovecot || echo /usr/sbin/dovecot)"
