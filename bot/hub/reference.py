"""Hub ids and model URLs as users paste them; the reading itself is pure and lives in the parser, which
must know a pasted id is a model it does not have (core/parser/hub_ref.py)."""

from core.parser.hub_ref import HubRef, Site, find_reference

__all__ = ["HubRef", "Site", "find_reference"]
