print(1000000, flush=True)
input()
raise ValueError('a broken interactor')
