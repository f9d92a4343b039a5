"""Where a model's figures came from, for the answer's provenance line: built in, or looked up (when, where,
and which memory terms its config could not give)."""

from __future__ import annotations

from bot.answer.views import ModelOrigin, UnknownTerm
from core.estimator import Estimate
from core.registry import load_registry


def model_origin(model_id: str | None, model_name: str) -> ModelOrigin | None:
    """Where a looked-up model's figures came from, for the answer's provenance line (None: built in)."""
    registry = load_registry()
    model = registry.by_id.get(model_id or "")
    if model is None:
        match = registry.resolve(model_name)
        model = match.model if match else None
    if model is None or model.origin not in ("hub", "cache"):
        return None
    return ModelOrigin(
        name=model.hf_repo or model.name,
        origin=model.origin,
        source=model.source or model.hf_repo,
        date=model.fetched_on,
        unknown=[_term(t) for t in model.unknown_terms],
        from_count=any(t.startswith("kv_cache: unrecognised") for t in model.unknown_terms),
    )


def _term(text: str) -> UnknownTerm:
    """'kv_cache: unrecognised architecture (mamba)' -> term 'kv_cache', reason 'unrecognised …'."""
    term, _, reason = text.partition(": ")
    return UnknownTerm(term=term, reason=reason or term)


def image_tokens(model_id: str | None) -> int:
    """Context tokens one 1024×1024 image takes in a vision-language model (0: a text model)."""
    model = load_registry().by_id.get(model_id or "")
    return model.image_tokens if model is not None else 0


def model_source(est: Estimate, origin: ModelOrigin | None) -> dict[str, object]:
    """Where the figures came from, for the JSON contract: the built-in list, the Hub, the cache of an
    earlier lookup, or only the size in the name (a typical dense shape)."""
    if origin is not None:
        return {
            "kind": origin.origin,
            "source": origin.source,
            "date": origin.date,
            "not_computed": [t.term for t in origin.unknown],
        }
    if est.representative_shape:
        return {"kind": "name", "source": "", "date": "", "not_computed": []}
    model = load_registry().by_id.get(est.query.model or "")
    return {"kind": "registry", "source": model.source if model else "", "date": "", "not_computed": []}
