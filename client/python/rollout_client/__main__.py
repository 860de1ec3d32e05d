"""``python -m rollout_client``: the command line (see rollout_client.cli)."""
import sys

from rollout_client.cli import main

if __name__ == "__main__":
    sys.exit(main())
