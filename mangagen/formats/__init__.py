"""Date formats of the interface's languages where the app's own differ from Django's
(settings FORMAT_MODULE_PATH); a language with no module here takes Django's."""
