class Options:
    pass


options = Options()
options.require_grad = True
if options.require_grad:
    print("gradients on")
