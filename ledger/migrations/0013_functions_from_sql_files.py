"""The ledger's stored functions come from ledger/sql/*.sql from now on.

Until here each function's text lived only inside the migration that last
changed it (0012 patched 0009's by string replacement). The files hold exactly
what those migrations installed; this reinstalls every function from them, so
the database and the files agree from this migration on
(ledger/stored_functions.py).
"""

from django.db import migrations

from ledger.stored_functions import installer


class Migration(migrations.Migration):
    dependencies = [("ledger", "0012_batch_locks_holds_first")]

    operations = [
        migrations.RunPython(
            installer(
                {
                    "ledger_transfer_append_only": (
                        "ff9b056a43e8d66e5ef9c0c432d8f2a6f3d28b974977aacc88cec8bea7f8151b"
                    ),
                    "ledger_account_permanent": (
                        "ff9b7c0791107e385ba5b887852dbd7bc408a697e64c20ab024ba0316fe3061c"
                    ),
                    "ledger_authorize": (
                        "26e7ea2f85f3aed9c57e83b6371324fc2ac84979c9efbf74df6d7fb528187d4e"
                    ),
                    "ledger_resolve": (
                        "f759167bbeb447d7e3d99c110380009068704d6467b97f7a95445db6e38f75c3"
                    ),
                    "ledger_batch": (
                        "86ea01dd5f7ab70ec349b185de0c0364edddfe1f77c74d316354472cfcfe3f62"
                    ),
                }
            ),
            migrations.RunPython.noop,
        )
    ]
