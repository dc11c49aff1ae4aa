"""Sign-in, sign-up and the API: passwords, lockouts, DRF and its throttles, the schema."""

from mangagen.settings.environment import env

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed sign-ins lock a username out from the address that failed (never everywhere:
# one attacker cannot lock its owner out), or an address out of every username, for
# LOGIN_LOCKOUT_SECONDS (mangagen/accounts/throttle.py).
LOGIN_FAILURES_PER_USERNAME = env.int("LOGIN_FAILURES_PER_USERNAME", default=5)
LOGIN_FAILURES_PER_ADDRESS = env.int("LOGIN_FAILURES_PER_ADDRESS", default=20)
LOGIN_LOCKOUT_SECONDS = env.int("LOGIN_LOCKOUT_SECONDS", default=15 * 60)
SIGNUP_PER_ADDRESS_PER_HOUR = env.int("SIGNUP_PER_ADDRESS_PER_HOUR", default=10)
# Behind a proxy (BEHIND_PROXY), how many proxies in front append to X-Forwarded-For:
# the client address every throttle, the lockout and the logs count is the hop this
# many from the right (mangagen/kernel/client_address.py); what is left of it is the
# client's to write.
TRUSTED_PROXY_HOPS = env.int("TRUSTED_PROXY_HOPS", default=1)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"


# --- API ---------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON, a form or nothing: an endpoint that needs no body takes whatever a client
    # sends with it (fetch and requests send `{}` as JSON, sendBeacon a form).
    "DEFAULT_PARSER_CLASSES": [
        # DRF's, answering a body they cannot read in the error shape (mangagen/api/parsers.py).
        "mangagen.api.parsers.JSONParser",
        "mangagen.api.parsers.FormParser",
        "mangagen.api.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "mangagen.api.schema.ErrorDeclaringSchema",
    "EXCEPTION_HANDLER": "mangagen.api.errors.exception_handler",
    # Per person, so no one can flood the GPU or the ledger (429 with Retry-After).
    "DEFAULT_THROTTLE_RATES": {
        "speculate": env.str("THROTTLE_SPECULATE", default="30/min"),
        # Leaving Review (its beacon): each leave may write a row, so it is bounded too.
        "leave": env.str("THROTTLE_LEAVE", default="60/min"),
        "generate": env.str("THROTTLE_GENERATE", default="20/min"),
        "draft": env.str("THROTTLE_DRAFT", default="20/min"),
        "checkout": env.str("THROTTLE_CHECKOUT", default="10/min"),
        # Storyboard writes (create, autosave, delete); autosave sends at most ~85/min.
        "storyboards": env.str("THROTTLE_STORYBOARDS", default="120/min"),
        "export": env.str("THROTTLE_EXPORT", default="30/min"),
        # Reading links, per address: a reader's page and its images (a long comic's
        # pages, read through twice, in one minute).
        "read": env.str("THROTTLE_READ", default="300/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Mangagen API",
    "DESCRIPTION": "Stories in, manga panels out. Credits are held, then captured per render.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["mangagen.api.permissions.StaffUnlessDebug"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two choice sets share the field name `style`: a comic's drawing style and a line's
    # balloon style; each gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "StyleEnum": "mangagen.storyboards.models.Style",
        "BalloonStyleEnum": "mangagen.storyboards.models.BalloonStyle",
    },
}
