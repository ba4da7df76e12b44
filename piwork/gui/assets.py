"""Where the bundled resources (icons, palettes) are: beside the package in a checkout, or in a frozen build."""

from __future__ import annotations

import sys
from pathlib import Path

APP_ID = "dev.piwork.Piwork"  # QGuiApplication.desktopFileName, matches packaging/linux/<APP_ID>.desktop


def resources_dir() -> Path:
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
