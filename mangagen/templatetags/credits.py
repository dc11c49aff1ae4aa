"""Template filters of the credit pages: `{{ hold.reference|public_reference }}`."""

from django import template

from mangagen.kernel.credit_history import public_reference as _public_reference

register = template.Library()


@register.filter
def public_reference(reference: str) -> str:
    """A hold's reference as the person reads it, in the interface's language."""
    return _public_reference(reference)
