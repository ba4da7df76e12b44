import sys

from piwork.cli import main

sys.exit(main())
