import sys
sys.stdout.write("x\ny")
