import sys

from piwork.conformance.runner import main

sys.exit(main(sys.argv[1:]))
