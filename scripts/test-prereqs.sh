#!/usr/bin/env bash
# The Debian packages the tests use: a real browser for the window, real chat
# servers on loopback, and systemd-analyze to verify the service unit. Installs what is missing when it can (root + apt-get),
# otherwise stops at once and names the packages to install.
set -euo pipefail

# command-or-file → Debian package
declare -A NEEDS=(
  [/usr/bin/chromium]=chromium
  [/usr/sbin/ngircd]=ngircd
  [/usr/sbin/dovecot]=dovecot-imapd
  [/usr/bin/prosody]=prosody
  [/usr/bin/systemd-analyze]=systemd
)

missing=()
for need in "${!NEEDS[@]}"; do
  if [[ "$need" == /* ]]; then [[ -x "$need" ]] || missing+=("${NEEDS[$need]}")
  else command -v "$need" >/dev/null 2>&1 || missing+=("${NEEDS[$need]}"); fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing test dependencies from Debian: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

echo "npm test needs these Debian packages: ${missing[*]}" >&2
echo "Install them with: sudo apt-get install --no-install-recommends ${missing[*]}" >&2
exit 1
