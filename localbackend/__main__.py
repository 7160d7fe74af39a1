import sys

from localbackend.cli import main

sys.exit(main())
