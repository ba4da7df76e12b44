"""Local image paths in a prompt become attachments referenced as [image1]…; others stay text."""

from __future__ import annotations

import base64
from pathlib import Path

from piwork.core.context.image_paths import MAX_IMAGE_BYTES, attach_images, may_name_images

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 24


def test_paths_to_existing_images_are_attached_in_order(tmp_path: Path) -> None:
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "error.png").write_bytes(PNG)
    (tmp_path / "my shot.JPG").write_bytes(b"\xff\xd8\xff" + b"1" * 10)
    text = 'See shots/error.png and "my shot.JPG", again shots/error.png, not gone.png.'
    assert may_name_images(text)
    attached = attach_images(text, str(tmp_path))
    assert (
        attached.text
        == "See [image1] (error.png) and [image2] (my shot.JPG), again [image1] (error.png), not gone.png."
    )
    assert [i["mimeType"] for i in attached.images] == ["image/png", "image/jpeg"]
    assert base64.b64decode(attached.images[0]["data"]) == PNG
    assert attached.too_large == []


def test_a_large_image_stays_a_path_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "huge.png").write_bytes(PNG + b"\0" * MAX_IMAGE_BYTES)
    attached = attach_images("look at huge.png", str(tmp_path))
    assert attached.images == [] and attached.too_large == ["huge.png"]
    assert attached.text == (
        "look at huge.png\n\n(Images over the attachment size, left as paths: huge.png. "
        "Open them with the read tool, which resizes them.)"
    )


def test_text_without_image_paths_is_left_alone(tmp_path: Path) -> None:
    assert not may_name_images("fix the png export in src/export.py")
    assert attach_images("the file README.md", str(tmp_path)).text == "the file README.md"
