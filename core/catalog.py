"""The card catalog (data/cards.toml): what each card really has, and the names people type for it."""

from __future__ import annotations

import re
import tomllib
from enum import StrEnum
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.suggest import closest_ids
from core.units import GIB, MIB


class Segment(StrEnum):
    DATACENTER = "datacenter"
    WORKSTATION = "workstation"
    CONSUMER = "consumer"


class Card(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    name: str
    vendor: str
    architecture: str = ""
    year: int = 0
    memory_gib: float
    memory_mib_visible: int | None = None
    cuda_device_name: str | None = None
    memory_type: str
    bandwidth_gb_s: float
    fp32_tflops: float = 0.0
    fp16_tflops: float = 0.0
    bf16_tflops: float = 0.0
    fp8_tflops: float = 0.0
    int8_tops: float = 0.0
    interconnect: Literal["nvlink", "pcie", "infinity-fabric", "hccs"] = "pcie"
    interconnect_gb_s: float = 0.0
    pcie_gen: int | None = None
    ecc: bool = False
    mig: bool = False
    segment: Segment
    price_tier: Literal["low", "mid", "high", "very-high"] = "mid"
    tdp_w: int | None = None
    popularity: int = 0
    aliases: list[str] = []
    markets: list[Literal["cn", "global"]] = ["cn", "global"]  # where it is rented (data/cards.toml)
    markets_source: str = ""
    notes: str = ""
    source: str
    # modded boards (issue 19): the stock card whose chip they keep, and the risks an answer states
    modded: bool = False
    base: str | None = None
    # a card standing in for a size ("显存8g", Catalog.typical_of): the memory it is really sold with
    sold_memory_gib: float | None = None
    caveats: list[Literal["no_warranty", "blower_noise", "driver", "availability", "turing"]] = []

    @property
    def memory_bytes(self) -> int:
        """The capacity the job can see: nvidia-smi's total where known, else the sold 'GB' taken as GiB."""
        if self.memory_mib_visible:
            return self.memory_mib_visible * MIB
        return int(self.memory_gib * GIB)

    @property
    def unified_memory(self) -> bool:
        """An Apple silicon Mac (data/apple.toml): one device, its GPU's share of unified memory, Metal."""
        return self.vendor == "Apple"

    @property
    def has_nvlink(self) -> bool:
        return self.interconnect != "pcie"

    @property
    def tensor_tflops(self) -> float:
        """Dense 16-bit tensor throughput: bf16 where the card has it, else fp16."""
        return self.bf16_tflops or self.fp16_tflops or self.fp32_tflops


class CardMatch(BaseModel):
    """A resolved card name; `ambiguous` lists the other variants the name could mean."""

    model_config = ConfigDict(frozen=True)

    card: Card
    matched: str
    ambiguous: tuple[str, ...] = ()


def normalize_name(text: str) -> str:
    """Lowercase, unify separators and drop vendor words so 'NVIDIA A100-80GB' ~ 'a100 80gb'."""
    text = text.lower().replace("＿", "_").replace("－", "-")
    text = re.sub(r"(nvidia|英伟达|geforce|tesla|n卡|a卡|显卡)", " ", text)
    text = re.sub(r"[\s_\-/]+", " ", text)
    text = re.sub(r"(\d+)\s*(?:gb|g|gib)\b", r"\1g", text)
    return text.strip()


class Catalog:
    """All cards, with alias lookup; built once per process (the data is read-only).

    `cards` are the rental cards every search screens; `devices` are machines people own (Apple silicon Macs,
    data/apple.toml), found by id and by name like a card but never offered by a plan or a search."""

    def __init__(self, cards: list[Card], devices: list[Card] | None = None) -> None:
        self.cards = sorted(cards, key=lambda c: (-c.popularity, c.id))
        self.devices = sorted(devices or [], key=lambda c: (-c.popularity, c.id))
        self.by_id = {card.id: card for card in self.named}
        self._by_alias: dict[str, list[Card]] = {}
        for card in self.named:
            for alias in {card.id, card.name, *card.aliases}:
                key = normalize_name(alias)
                bucket = self._by_alias.setdefault(key, [])
                if card not in bucket:
                    bucket.append(card)
        for bucket in self._by_alias.values():
            bucket.sort(key=lambda c: (-c.popularity, c.id))
        self._id_by_alias = {key: bucket[0].id for key, bucket in self._by_alias.items()}

    @property
    def named(self) -> list[Card]:
        """Every card and device a question can name: the rental cards first, then the devices."""
        return [*self.cards, *self.devices]

    @property
    def alias_keys(self) -> list[str]:
        """Every normalized alias, longest first (parsers scan text for these)."""
        return sorted(self._by_alias, key=len, reverse=True)

    def get(self, card_id: str) -> Card:
        return self.by_id[card_id]

    def resolve(self, name: str) -> CardMatch | None:
        """Exact alias (most-rented variant wins when several share it), else None."""
        key = normalize_name(name)
        bucket = self._by_alias.get(key)
        if not bucket:
            return None
        return CardMatch(card=bucket[0], matched=name, ambiguous=tuple(c.id for c in bucket[1:]))

    def closest(self, name: str, limit: int = 3) -> list[str]:
        """Card ids whose names look like `name`, for 'did you mean' messages."""
        return closest_ids(normalize_name(name), self._id_by_alias, limit)

    def with_memory(self, memory_bytes: int) -> list[Card]:
        """Cards sold with that capacity (a '24G' mention), most rented first."""
        return [c for c in self.cards if abs(c.memory_gib * GIB - memory_bytes) < 0.5 * GIB]

    def typical_of(self, memory_bytes: int) -> Card | None:
        """A card given only by its size ("显存12g", "a 16GB GPU"): the slowest consumer card of that size
        (the safe side: a speed not promised too high; an RTX 3060 for 12 GB, a 4060 Ti for 16), holding
        exactly the size said, so its bandwidth can stand in for speed and the offload split (the answer
        names it). None when no card is sold with that size or more."""
        sold = self.with_memory(memory_bytes)
        if not sold:
            # no card of that size in the catalogue (an 8 GB or 6 GB card): the slowest consumer card with at
            # least that much lends its bandwidth (4060 Ti: 288 GB/s, between a 4060's 272 and a 2060's 336)
            sold = [
                c
                for c in self.cards
                if c.segment is Segment.CONSUMER and not c.modded and c.memory_gib * GIB >= memory_bytes
            ]
            if not sold:
                return None
        sold = sorted(sold, key=lambda c: (c.segment is not Segment.CONSUMER, c.modded, c.bandwidth_gb_s))
        return sold[0].model_copy(
            update={
                "memory_gib": memory_bytes / GIB,
                "sold_memory_gib": sold[0].memory_gib,
                "memory_mib_visible": None,
                "aliases": [],
            }
        )


def apple_gpu_share(memory_gib: float, share: dict[str, object]) -> float:
    """The share of unified memory Metal lets the GPU wire by default (recommendedMaxWorkingSetSize):
    data/apple.toml [share], 2/3 up to 36 GB and 3/4 above."""
    small_up_to = float(share["small_up_to_gib"])  # type: ignore[arg-type]
    return float(share["small"] if memory_gib <= small_up_to else share["large"])  # type: ignore[arg-type]


def _apple_devices(raw: dict[str, object]) -> list[Card]:
    """One device per chip configuration × unified-memory size (data/apple.toml)."""
    share = raw["share"]
    chips = raw["chip"]
    assert isinstance(share, dict) and isinstance(chips, list)
    smallest: dict[str, float] = {}
    for chip in chips:
        smallest[chip["id"]] = min([smallest.get(chip["id"], 1e9), *chip["memory_gib"]])
    devices: list[Card] = []
    for chip in chips:
        spoken = chip["id"].replace("-", " ")  # "m3 max"
        for memory in chip["memory_gib"]:
            gpu_share = apple_gpu_share(memory, share)
            aliases = [f"{spoken} {memory}g", f"apple {spoken} {memory}g", f"{spoken} {memory}g unified"]
            if memory == smallest[chip["id"]] and " " in spoken:
                aliases += [spoken, f"apple {spoken}"]  # the chip alone: its smallest memory (the safe side)
            devices.append(
                Card(
                    id=f"{chip['id']}-{memory}gb",
                    name=f"{chip['name']} {memory}GB",  # as cards are named ("RTX 4090 24GB"): in no language
                    vendor="Apple",
                    architecture="Apple silicon",
                    year=chip["year"],
                    memory_gib=memory,
                    memory_mib_visible=round(memory * 1024 * gpu_share),
                    memory_type="LPDDR4X" if chip["id"] == "m1" else "LPDDR5",
                    bandwidth_gb_s=chip["bandwidth_gb_s"],
                    fp32_tflops=chip["fp32_tflops"],
                    fp16_tflops=chip["fp32_tflops"],
                    bf16_tflops=chip["fp32_tflops"],
                    segment=Segment.CONSUMER,
                    price_tier="low",
                    popularity=1 if memory == smallest[chip["id"]] else 0,
                    aliases=aliases,
                    notes=(
                        f"unified memory; Metal's default working set {gpu_share:.0%} of it "
                        "(sudo sysctl iogpu.wired_limit_mb raises it)"
                    ),
                    source=f"{chip['source']}; GPU share: {share['source']}",
                )
            )
    return devices


@cache
def load_catalog() -> Catalog:
    with open(DATA_DIR / "cards.toml", "rb") as handle:
        raw = tomllib.load(handle)
    with open(DATA_DIR / "apple.toml", "rb") as handle:
        apple = tomllib.load(handle)
    return Catalog([Card.model_validate(entry) for entry in raw["card"]], _apple_devices(apple))
