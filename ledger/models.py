"""The credits ledger: double-entry accounts, an append-only journal, holds.

Modelled on TigerBeetle's two-phase transfers. Every movement of credits is a
`Transfer` from a debit account to a credit account. A hold is a *pending*
transfer (user → revenue) that is later *posted* (captured, fully or in part)
or *voided* (released or expired), exactly once. The journal is never edited;
`Hold` carries the mutable state of each pending transfer, and `Account`
caches balances that the journal can always recompute (a system account's
in its `BalanceShard` rows).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

# How many rows each system account's balance is split over. Every capture,
# grant and refund touches a system account; with one row, parallel captures
# by different people would all queue on it. The shard is chosen by the user
# account on the other side (`shard_for`), so one person's operations stay in
# one shard and different people's rarely meet. Changing it needs no data
# migration: a balance is the sum of its shards, whichever they are.
SYSTEM_SHARDS = 16


def shard_for(user_account_id: int) -> int:
    return user_account_id % SYSTEM_SHARDS


class SystemAccount(models.TextChoices):
    """The operator's own accounts. They may run negative: they are sources."""

    GRANTS = "grants", "Grants and adjustments"
    PURCHASES = "purchases", "Purchases"
    REVENUE = "revenue", "Revenue (captured renders)"
    REFUNDS = "refunds", "Refunds and revocations"


class Account(models.Model):
    class Kind(models.TextChoices):
        USER = "user", "User"
        SYSTEM = "system", "System"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="credit_account",
    )
    code = models.CharField(
        max_length=32, choices=SystemAccount.choices, null=True, blank=True, unique=True
    )
    available = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    flagged_at = models.DateTimeField(
        null=True, blank=True, help_text="Frozen for an operator: no new holds until cleared."
    )
    flag_reason = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(condition=Q(held__gte=0), name="ledger_account_held_gte_0"),
            models.CheckConstraint(
                condition=Q(kind="system") | Q(available__gte=0),
                name="ledger_user_account_available_gte_0",
            ),
            # A system account's balance lives in its BalanceShard rows, never
            # in its own row: that row is no hot spot.
            models.CheckConstraint(
                condition=Q(kind="user") | Q(available=0, held=0),
                name="ledger_system_account_balance_in_shards",
            ),
            models.CheckConstraint(
                condition=(
                    Q(kind="user", user__isnull=False, code__isnull=True)
                    | Q(kind="system", user__isnull=True, code__isnull=False)
                ),
                name="ledger_account_owner_matches_kind",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.SYSTEM:
            return f"system:{self.code}"
        assert self.user is not None  # ledger_account_owner_matches_kind
        return f"user:{self.user.get_username()}"


class BalanceShard(models.Model):
    """A slice of a system account's cached balance.

    A system account's balance is the sum of its shards (its own row holds
    zero, by a CHECK). The journal still names the one system account; only
    the cache is split, so reconciliation compares one figure per account.
    System accounts are sources and sinks: a shard may run negative, and
    holds never rest on them, so there is no `held` here.
    """

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="shards")
    shard = models.PositiveSmallIntegerField()
    available = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["account", "shard"]
        constraints = [
            models.UniqueConstraint(fields=["account", "shard"], name="ledger_shard_once"),
        ]

    def __str__(self) -> str:
        return f"{self.account} shard {self.shard}: {self.available}"


class Transfer(models.Model):
    """One immutable journal line. Never updated, never deleted."""

    class Kind(models.TextChoices):
        GRANT = "grant", _("Grant")
        REVOKE = "revoke", _("Revoke")
        PENDING = "pending", _("Hold placed")
        POST = "post", _("Hold captured")
        VOID = "void", _("Hold released")

    POSTED_KINDS = (Kind.GRANT, Kind.REVOKE, Kind.POST)
    RESOLVING_KINDS = (Kind.POST, Kind.VOID)

    # Every index here is written on each of the two journal rows of every
    # operation (WAL, then fsync at commit): the ones that serve no query, or
    # that another index already serves, are left out (see Meta).
    key = models.CharField(max_length=200, unique=True, help_text="Idempotency key.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    # The journal's references to accounts and to other journal rows carry no
    # database foreign key (db_constraint=False): neither can dangle, because
    # accounts are never deleted and the journal is never edited (triggers
    # refuse both, migrations 0002, 0007 and 0010), and each operation takes
    # its ids from rows it has just locked or written. A foreign key would
    # re-read and KEY SHARE-lock those rows at every commit: nine checks and
    # nine WAL records per hold placed and captured, and a lock every capture
    # takes on the one revenue account row.
    debit_account = models.ForeignKey(
        Account,
        on_delete=models.PROTECT,
        related_name="debits",
        db_index=False,
        db_constraint=False,
    )
    credit_account = models.ForeignKey(
        Account,
        on_delete=models.PROTECT,
        related_name="credits",
        db_index=False,
        db_constraint=False,
    )
    amount = models.BigIntegerField()
    pending = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="resolutions",
        db_index=False,
        db_constraint=False,
        help_text="For a capture or release: the pending transfer it resolves.",
    )
    reason = models.CharField(max_length=255, blank=True)
    reference = models.CharField(max_length=255, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        help_text="The operator who did this by hand, if anyone.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="ledger_transfer_amount_gt_0"),
            models.CheckConstraint(
                condition=~Q(debit_account=models.F("credit_account")),
                name="ledger_transfer_distinct_accounts",
            ),
            models.CheckConstraint(
                condition=(
                    Q(kind__in=["post", "void"], pending__isnull=False)
                    | (~Q(kind__in=["post", "void"]) & Q(pending__isnull=True))
                ),
                name="ledger_transfer_pending_iff_resolution",
            ),
            # The database itself guarantees a hold resolves at most once.
            # (Only resolutions have a `pending`, by the CHECK above; this
            # index also serves every look-up by `pending`.)
            models.UniqueConstraint(
                fields=["pending"],
                condition=Q(pending__isnull=False),
                name="ledger_transfer_resolves_once",
            ),
        ]
        indexes = [
            # These lead with the account: they serve its foreign key too.
            models.Index(fields=["debit_account", "kind"]),
            models.Index(fields=["credit_account", "kind"]),
            models.Index(
                fields=["actor"], condition=Q(actor__isnull=False), name="ledger_transfer_actor"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} {self.amount} {self.debit_account} → {self.credit_account}"


class Hold(models.Model):
    """The state of one pending transfer: pending → captured | released | expired."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        CAPTURED = "captured", "Captured"
        RELEASED = "released", "Released"
        EXPIRED = "expired", "Expired"

    # No database foreign keys to the ledger's own permanent rows (see
    # Transfer). Every index here is written when a hold is placed, and the
    # full ones again when it resolves (the update changes `state`, so it is
    # never HOT): the account's index holds open holds only, and the
    # resolution needs none (its transfer names the pending one, whose index
    # is unique).
    account = models.ForeignKey(
        Account,
        on_delete=models.PROTECT,
        related_name="holds",
        db_index=False,
        db_constraint=False,
    )
    amount = models.BigIntegerField()
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    reference = models.CharField(max_length=255, blank=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    pending_transfer = models.OneToOneField(
        Transfer, on_delete=models.PROTECT, related_name="hold", db_constraint=False
    )
    resolution_transfer = models.ForeignKey(
        Transfer,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    captured_amount = models.BigIntegerField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    resolution_reason = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["pk"]
        permissions = [("reconcile_hold", "Can release or capture holds by hand")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="ledger_hold_amount_gt_0"),
            models.CheckConstraint(
                condition=(
                    Q(state="pending", resolution_transfer__isnull=True, resolved_at__isnull=True)
                    | (
                        ~Q(state="pending")
                        & Q(resolution_transfer__isnull=False, resolved_at__isnull=False)
                    )
                ),
                name="ledger_hold_resolution_matches_state",
            ),
            models.CheckConstraint(
                condition=(
                    Q(
                        state="captured",
                        captured_amount__gt=0,
                        captured_amount__lte=models.F("amount"),
                    )
                    | (~Q(state="captured") & Q(captured_amount__isnull=True))
                ),
                name="ledger_hold_capture_within_amount",
            ),
        ]
        indexes = [
            # The sweep's and the stale filter's: only open holds are in it.
            models.Index(
                fields=["expires_at"],
                condition=Q(state="pending"),
                name="ledger_hold_open_by_expiry",
            ),
            # An account's open holds (reconciliation's `held`, open_holds).
            models.Index(
                fields=["account"],
                condition=Q(state="pending"),
                name="ledger_hold_open_by_account",
            ),
            models.Index(
                fields=["resolved_by"],
                condition=Q(resolved_by__isnull=False),
                name="ledger_hold_resolved_by",
            ),
        ]

    def __str__(self) -> str:
        return f"hold #{self.pk} ({self.amount}, {self.state})"

    @property
    def key(self) -> str:
        return self.pending_transfer.key
