#!/usr/bin/env bash
# chromium.sh installs Debian's chromium for web/'s browser test when
# /usr/bin/chromium is missing (or the one CHROMIUM_PATH names, when set).
#
# It is idempotent: an existing binary is reused and nothing is
# downloaded. The last line of stdout is the browser's path; everything
# else goes to stderr, so callers can write
#
#	export CHROMIUM_PATH="$(scripts/chromium.sh | tail -1)"
#
# Installing needs root, or sudo (apt-get).
set -euo pipefail

exec 3>&1 1>&2 # fd 3 is the real stdout; the rest goes to stderr
here=$(cd "$(dirname "$0")" && pwd)

path=${CHROMIUM_PATH:-/usr/bin/chromium}

log() { echo "chromium.sh: $*"; }

if [[ ! -x $path ]]; then
	if [[ $path != /usr/bin/chromium ]]; then
		log "CHROMIUM_PATH=$path is not an executable; installing Debian's chromium at /usr/bin/chromium"
		path=/usr/bin/chromium
	fi
fi
if [[ ! -x $path ]]; then
	log "installing Debian's chromium"
	"$here/apt-install.sh" chromium 3>&-
	if [[ ! -x $path ]]; then
		log "apt-get installed chromium but $path is missing"
		exit 1
	fi
fi
log "$("$path" --version 2>/dev/null || echo "$path (version unknown)")"
echo "$path" >&3
