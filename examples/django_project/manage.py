#!/usr/bin/env python
"""Django's command-line utility for this example project: ``python manage.py runserver``."""

import os
import sys
from pathlib import Path


def main() -> None:
    # Runnable from any directory: the project folder holds the `mysite` package.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
