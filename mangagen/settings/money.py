"""The ledger, the local demo's credits, and selling credits with Stripe."""

from mangagen.settings.environment import env

HOLD_DEFAULT_EXPIRES_SECONDS = env.int("HOLD_DEFAULT_EXPIRES_SECONDS", default=2 * 60 * 60)
# On PostgreSQL each hold operation is one stored-function call (ledger/fast_path.py),
# and concurrent ones on one account share a commit (ledger/batching.py). Off only to
# compare with the plain path (tests, bench/ledger.py).
LEDGER_FAST_PATH = True
LEDGER_BATCHING = True
DEMO_USERNAME = env.str("DEMO_USERNAME", default="demo")
DEMO_PASSWORD = env.str("DEMO_PASSWORD", default="demo-pass-1234")
DEMO_CREDITS = env.int("DEMO_CREDITS", default=20)


# --- Stripe ------------------------------------------------------------------
STRIPE_SECRET_KEY = env.str("STRIPE_SECRET_KEY", default="")
STRIPE_WEBHOOK_SECRET = env.str("STRIPE_WEBHOOK_SECRET", default="")
STRIPE_API_BASE = env.str("STRIPE_API_BASE", default="")
STRIPE_WEBHOOK_TOLERANCE_SECONDS = env.int("STRIPE_WEBHOOK_TOLERANCE_SECONDS", default=300)
# Prices in minor units. Override with CREDIT_PACKS='[{"code": …}, …]'.
CREDIT_PACKS = env.json(
    "CREDIT_PACKS",
    default=[
        {"code": "starter", "credits": 20, "price": 500, "currency": "usd"},
        {"code": "studio", "credits": 60, "price": 1200, "currency": "usd"},
        {"code": "publisher", "credits": 150, "price": 2500, "currency": "usd"},
    ],
)
