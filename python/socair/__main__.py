"""``python -m socair ARGS``: runs the installed ``socair`` command with ARGS, for where the
installation's ``bin`` directory is not on ``PATH``."""

import os
import sys

from socair._installed import command


def main() -> None:
    exe = command()
    if exe is None:
        sys.exit("socair: the socair command is not installed with this package (install the wheel)")
    if os.name == "nt":
        # No exec on Windows that keeps the console's process: run it and pass its exit code on.
        import subprocess

        sys.exit(subprocess.call([str(exe), *sys.argv[1:]]))
    os.execv(exe, ["socair", *sys.argv[1:]])


if __name__ == "__main__":
    main()
