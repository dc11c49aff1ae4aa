"""Template tags of the credits: `{{ hold.reference|public_reference }}`, and
`{% credits_now as figures %}`, the person's balance as every page shows it."""

from django import template

from ledger import selectors as ledger_selectors
from mangagen.kernel.credit_history import public_reference as _public_reference

register = template.Library()

# Where a request keeps its person's figures once read: the header and a page's own
# card show the same reading.
_READ = "mangagen_credits_now"


@register.filter
def public_reference(reference: str) -> str:
    """A hold's reference as the person reads it, in the interface's language."""
    return _public_reference(reference)


@register.simple_tag(takes_context=True)
def credits_now(context) -> ledger_selectors.Figures | None:
    """The signed-in person's figures (available, held, as_of), read once per request;
    None for a visitor. Every figure on a page comes from here or from a later reading
    (a `credits` event, GET /api/me/) with a greater `as_of`."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    if not hasattr(request, _READ):
        setattr(request, _READ, ledger_selectors.figures_of(user_id=user.pk))
    return getattr(request, _READ)
