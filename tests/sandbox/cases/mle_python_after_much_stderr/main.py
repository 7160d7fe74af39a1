import sys
sys.stderr.write("debug line\n" * 7000)  # ~77 KB of logging first
table = bytearray(400 * 1024 * 1024)     # over the memory cap: MemoryError at once
