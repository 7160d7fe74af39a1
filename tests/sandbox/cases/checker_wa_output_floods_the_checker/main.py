import sys

# One line of 7 MiB: a checker reading two integers must not choke on it.
sys.stdout.write("9" * (7 << 20))
