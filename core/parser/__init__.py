"""Free text (Chinese, English, mixed) -> intent + structured Query. Pure, offline, fast."""

from core.parser.lang import detect_lang
from core.parser.model_names import model_id_for
from core.parser.pipeline import parse
from core.parser.result import Intent, Lang, Parsed

__all__ = ["Intent", "Lang", "Parsed", "detect_lang", "model_id_for", "parse"]
