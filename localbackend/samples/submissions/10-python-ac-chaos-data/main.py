with open('magic.txt') as f:
    magic = int(f.read())
print(int(input()) + magic)
