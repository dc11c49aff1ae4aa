"""Production hardening (`manage.py check --deploy`): cookies, HTTPS, HSTS, the proxy, the
Content-Security-Policy and the Permissions-Policy."""

from csp.constants import NONCE as _NONCE
from csp.constants import NONE as _NONE
from csp.constants import SELF as _SELF

from mangagen.settings.environment import DEBUG, env

SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
# The language switcher's choice, kept a year (Django's default lasts the browser session).
LANGUAGE_COOKIE_SECURE = not DEBUG
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
# Where the proxy in front answers plain HTTP with a redirect to HTTPS itself (as
# deploy/nginx.conf does), say so: the app's own redirect is then off by default, and
# `check --deploy`'s warning that it is off (security.W008) is silenced, since the
# redirect does happen, one hop earlier.
PROXY_REDIRECTS_TO_HTTPS = env.bool("PROXY_REDIRECTS_TO_HTTPS", default=False)
SECURE_SSL_REDIRECT = env.bool(
    "SECURE_SSL_REDIRECT", default=not DEBUG and not PROXY_REDIRECTS_TO_HTTPS
)
SILENCED_SYSTEM_CHECKS: list[str] = []
if PROXY_REDIRECTS_TO_HTTPS and not SECURE_SSL_REDIRECT:
    SILENCED_SYSTEM_CHECKS.append("security.W008")
# Trust X-Forwarded-Proto / X-Forwarded-For only when a proxy in front sets them;
# otherwise any caller could claim https, or any address. bin/web reads it too (daphne's
# proxy headers: the access log shows the client's address, not the proxy's).
BEHIND_PROXY = env.bool("BEHIND_PROXY", default=False)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 0 if DEBUG else env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
# Preloading is a promise hard to take back (browsers ship the list; every subdomain must
# serve HTTPS for as long as it is on it), so it is the operator's choice: off unless
# asked for. Off, `check --deploy`'s reminder of it (security.W021) is silenced.
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False) and not DEBUG
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# --- Content-Security-Policy (django-csp's middleware) ------------------------------------
# Scripts only from this site: the modules under /static/ and the interface's catalog
# (/jsi18n/), never inline ones unless they carry the request's nonce
# (`nonce="{{ request.csp_nonce }}"`: the nonce is in the header only on pages that use
# it). Styles may be inline (the admin's pages set style attributes; a style runs no
# code). Websockets to this host are `connect-src 'self'`. Browsers report what the
# policy blocked to /csp-report/, which logs it (mangagen/views/csp_report.py).
CSP_REPORT_PATH = "/csp-report/"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [_SELF],
        "script-src": [_SELF, _NONCE],
        "style-src": [_SELF, "'unsafe-inline'"],
        "img-src": [_SELF, "data:"],
        "font-src": [_SELF],
        "connect-src": [_SELF],
        "object-src": [_NONE],
        "base-uri": [_SELF],
        "form-action": [_SELF],
        "frame-ancestors": [_NONE],
        "report-uri": [CSP_REPORT_PATH],
    },
}
# Features no page of the app uses, refused to every page and anything it embeds
# (mangagen/web/permissions_policy.py sends it).
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), "
    "magnetometer=(), microphone=(), midi=(), payment=(), usb=()"
)
