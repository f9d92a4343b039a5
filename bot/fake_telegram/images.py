"""What Telegram checks of an uploaded photo, without an image library: the format from its signature, the
size from its header (PNG's IHDR, JPEG's SOFn, WebP's VP8/VP8L/VP8X), and the Bot API's limits (10 MB,
width + height at most 10,000, sides at most 20:1)."""

from __future__ import annotations

import struct

from bot.fake_telegram.wire import bad_request

MAX_PHOTO_BYTES = 10 * 1024 * 1024
MAX_PHOTO_SIDES = 10_000
MAX_PHOTO_RATIO = 20
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def image_size(data: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) of a PNG, JPEG or WebP image; None for anything else or a broken header."""
    if data.startswith(PNG_SIGNATURE) and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "png", width, height
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[str, int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return "jpeg", width, height
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[str, int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return "webp", width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return "webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return "webp", int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def check_photo(data: bytes) -> tuple[int, int]:
    """The photo's (width, height), or Telegram's refusal of it."""
    if len(data) > MAX_PHOTO_BYTES:
        raise bad_request("file is too big")
    size = image_size(data)
    if size is None:
        raise bad_request("IMAGE_PROCESS_FAILED")
    _, width, height = size
    if width == 0 or height == 0 or width + height > MAX_PHOTO_SIDES:
        raise bad_request("PHOTO_INVALID_DIMENSIONS")
    if max(width, height) > MAX_PHOTO_RATIO * min(width, height):
        raise bad_request("PHOTO_INVALID_DIMENSIONS")
    return width, height
