"""English keeps the app's unambiguous dates (2025-12-01 21:48) rather than Django's
"12/01/2025 9:48 p.m."; templates ask for SHORT_DATETIME_FORMAT and DATETIME_FORMAT."""

SHORT_DATETIME_FORMAT = "Y-m-d H:i"
DATETIME_FORMAT = "Y-m-d H:i:s"
