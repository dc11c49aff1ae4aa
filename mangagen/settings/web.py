"""The apps, the middleware chain, the templates."""

from mangagen.settings.environment import BASE_DIR

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",  # intcomma: numbers grouped as the interface's language writes them
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_guid",
    "csp",  # the Content-Security-Policy header (settings/security.py)
    "ledger",
    "mangagen",
    "speculation",
]

MIDDLEWARE = [
    # Probes first: an orchestrator asks by address, over plain HTTP (observability/middleware.py).
    "mangagen.observability.middleware.ProbesMiddleware",
    # A scrape with a token, by the process's own address: the token decides, not the Host.
    "mangagen.observability.exposition.TokenScrapeMiddleware",
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # The request id (X-Request-ID), on every log line of the request and its Celery tasks.
    "django_guid.middleware.guid_middleware",
    # The client's address (the trusted proxy hop) on every log line of the request.
    "mangagen.observability.middleware.ClientOnLogLines",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy (a nonce per request, for inline scripts) and Permissions-Policy.
    "csp.middleware.CSPMiddleware",
    "mangagen.web.permissions_policy.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface's language: the switcher's cookie, else Accept-Language (LANGUAGES).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # HTTP latency and answers by view (django_http_requests_latency_seconds_by_view_method).
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "mangagen.urls"
# A form refused by the CSRF check: the styled page (mangagen/views/error_pages.py).
CSRF_FAILURE_VIEW = "mangagen.views.error_pages.csrf_failure"
ASGI_APPLICATION = "mangagen.asgi.application"
WSGI_APPLICATION = "mangagen.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "mangagen.views.interface_languages.catalog_context",
                "mangagen.views.prices.render_prices",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
