import helper
with open("data.txt") as f:
    print(helper.shout(f.read().strip()))
