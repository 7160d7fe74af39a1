#!/usr/bin/env bash
# Installs the runner as a systemd service on a bare judge host (as root):
#
#   sudo bash deploy/systemd/install.sh
#   sudoedit /etc/oj-runner/runner.env      # the tokens and BACKEND_URL
#   sudo systemctl enable --now oj-runner
#
# It puts a virtual environment with the runner in PREFIX (/opt/oj-runner),
# the unit in UNIT_DIR (/etc/systemd/system) and, when there is none yet, the
# settings file in ETC_DIR (/etc/oj-runner). The host also needs a Docker
# engine and the sandbox images: bash scripts/setup.sh does both.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="${PREFIX:-/opt/oj-runner}"
unit_dir="${UNIT_DIR:-/etc/systemd/system}"
etc_dir="${ETC_DIR:-/etc/oj-runner}"

python3 -c 'import ensurepip, venv' 2>/dev/null || {
    echo "python3-venv is missing: apt-get install -y python3-venv" >&2
    exit 1
}
echo "installing the runner into $prefix/venv" >&2
mkdir -p "$prefix"
[ -x "$prefix/venv/bin/python" ] || python3 -m venv "$prefix/venv"
"$prefix/venv/bin/python" -m pip install -q --disable-pip-version-check .
install -m 0644 README.md "$prefix/README.md"

echo "installing the unit into $unit_dir" >&2
mkdir -p "$unit_dir"
sed "s|/opt/oj-runner|$prefix|g; s|/etc/oj-runner|$etc_dir|g" deploy/systemd/oj-runner.service \
    >"$unit_dir/oj-runner.service"
mkdir -p "$etc_dir"
if [ ! -e "$etc_dir/runner.env" ]; then
    install -m 0600 deploy/runner.env.example "$etc_dir/runner.env"
    echo "wrote $etc_dir/runner.env: set the tokens and BACKEND_URL there" >&2
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    echo "then: systemctl enable --now oj-runner" >&2
fi
