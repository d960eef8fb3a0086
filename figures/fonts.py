"""Make sure Chinese glyphs render: pick an installed CJK font as the application's fallback."""
from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase

CJK_FAMILIES = (
    "WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
    "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "SimHei",
)


def cjk_family() -> str | None:
    """The first installed font family that has Chinese glyphs, or None."""
    families = set(QFontDatabase.families())
    for family in CJK_FAMILIES:
        if family in families:
            return family
    for family in QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        return family
    return None


def install_cjk_font(app) -> str | None:
    """Put a CJK family behind the default font so 小明 never renders as boxes."""
    family = cjk_family()
    if family:
        font = app.font()
        font.setFamilies([font.family(), family])
        app.setFont(font)
        QFont.insertSubstitution(font.family(), family)
    return family
