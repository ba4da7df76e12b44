#!/usr/bin/env bash
# Builds a one-folder piwork app in dist/piwork-<version>/ with PyInstaller.
# Usage: bash packaging/build.sh   (from any directory; uses ./.venv when present)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
"$PY" -m pip install -q -e '.[packaging]'
"$PY" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller \
  packaging/pyinstaller/piwork.spec
echo "built: $(ls -d dist/piwork-*)"
echo "desktop entry: packaging/linux/dev.piwork.Piwork.desktop (install it with the icon resources/icons/piwork.png)"
