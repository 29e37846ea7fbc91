"""``python -m socair ARGS``: runs the installed ``socair`` command with ARGS, for where the
installation's ``bin`` directory is not on ``PATH``."""

import os
import sys

from socair._installed import command


def main() -> None:
    exe = command()
    if exe is None:
        sys.exit("socair: the socair command is not installed with this package (install the wheel)")
    args = ["socair", *sys.argv[1:]]
    if os.name == "nt":
        import subprocess

        sys.exit(subprocess.call([str(exe), *sys.argv[1:]]))
    os.execv(exe, args)


if __name__ == "__main__":
    main()
