"""``python -m collector --log-dir DIR... --out FILE``: the collector from the project (brokers run the built file)."""
import sys

from .cli import main

sys.exit(main(sys.argv[1:], prog="python -m collector"))
