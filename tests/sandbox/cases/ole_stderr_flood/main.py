import sys
line = "e" * 4096 + "\n"
while True:
    sys.stderr.write(line)
