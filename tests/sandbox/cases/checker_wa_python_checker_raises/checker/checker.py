import sys

numbers = [int(x) for x in open(sys.argv[2]).read().split()]
sys.exit(0 if numbers == [42] else 1)
