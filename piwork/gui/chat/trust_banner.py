"""A bar above the composer that holds a trust question back while the user is typing.

A trust dialog that pops up mid-sentence takes the keys meant for the message: the Enter that would have
sent it answers the dialog instead (a re-ask's default answer is "Do not trust"). So while the user types,
the question waits behind this bar until they choose Review. Nothing of the project loads meanwhile: the
caller awaits the review before asking, and asks before loading.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

CHANGED_TEXT = (
    "Project resources changed since you trusted this folder — nothing of them loads until you review."
)
UNDECIDED_TEXT = "This project folder has resources that load only if you trust it — review to decide."


class TrustBanner(QFrame):
    reviewRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trustBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Trust question waiting")
        self.text = QLabel(self)
        self.text.setObjectName("trustBannerText")
        self.text.setWordWrap(True)
        self.review_button = QPushButton("&Review…", self)
        self.review_button.setObjectName("trustBannerReview")
        self.review_button.setAutoDefault(False)
        self.review_button.setAccessibleDescription("Open the trust question for this project folder")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.review_button)
        self.review_button.clicked.connect(self.reviewRequested)
        self.hide()

    async def wait_for_review(self, changed: bool) -> None:
        """Show the bar and return once the user chooses Review (the bar hides again)."""
        self.text.setText(CHANGED_TEXT if changed else UNDECIDED_TEXT)
        self.setAccessibleDescription(self.text.text())
        chosen: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def settle() -> None:
            if not chosen.done():
                chosen.set_result(None)

        self.reviewRequested.connect(settle)
        self.show()
        try:
            await chosen
        finally:
            self.reviewRequested.disconnect(settle)
            self.hide()
