#!/usr/bin/env bash
# Installs Dovecot's IMAP server (the apt package `dovecot-imapd`) for the
# Email channel's tests when it is missing; where it cannot, it warns and
# exits 0 and the tests skip (or fail under CI=true). The tests start dovecot themselves,
# unprivileged, with a throwaway config: the system service is not used.
set -u
for d in dovecot /usr/sbin/dovecot; do
  if command -v "$d" >/dev/null 2>&1; then
    echo "dovecot: found $(command -v "$d")"
    exit 0
  fi
done
. "$(dirname "$0")/apt-install.sh"
apt_install dovecot-imapd "the Email channel's IMAP tests are"
