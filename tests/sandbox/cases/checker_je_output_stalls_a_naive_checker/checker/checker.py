import sys

# A naive checker: quadratic in the output's length.
output = open(sys.argv[2]).read()
pairs = sum(1 for i in range(len(output)) for j in range(i, len(output)) if output[i] == output[j])
sys.exit(0 if output.split() == open(sys.argv[3]).read().split() else 1)
