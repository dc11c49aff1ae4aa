"""The credit packs on sale, from settings."""

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class Pack:
    code: str
    credits: int
    price: int  # minor units (cents)
    currency: str

    @property
    def price_display(self) -> str:
        return f"{self.price / 100:.2f} {self.currency.upper()}"


def packs() -> list[Pack]:
    return [Pack(**p) for p in settings.CREDIT_PACKS]


def pack(code: str) -> Pack | None:
    return next((p for p in packs() if p.code == code), None)
