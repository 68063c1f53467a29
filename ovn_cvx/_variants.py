"""The names of the formulations, importable without NumPy (the command line's choices)."""

#: the four formulations: soft (S) or hard (H) w, soft or hard b
VARIANTS = ("SwSb", "SwHb", "HwSb", "HwHb")
#: the two kinds of problem of the verification suite: a linear or a kernel model
KINDS = ("linear", "kernel")
#: every selection of ``--formulations``: a variant, a kind, or "<kind>-<variant>"
FORMULATIONS = (*VARIANTS, *KINDS, *(f"{kind}-{variant}" for kind in KINDS for variant in VARIANTS))
