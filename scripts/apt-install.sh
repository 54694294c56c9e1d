#!/usr/bin/env bash
# apt-install.sh installs Debian packages for the test scripts: as root,
# or through sudo, waiting up to 10 minutes for another apt to finish.
#
#	scripts/apt-install.sh postgresql
set -euo pipefail
sudo=()
if [[ $(id -u) -ne 0 ]]; then
	command -v sudo >/dev/null || { echo "apt-install.sh: not root and no sudo: install $* by hand" >&2; exit 1; }
	sudo=(sudo)
fi
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y "$@"
