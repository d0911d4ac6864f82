"""Static analysis: parse once, collect facts once, build the loop model once, run rules over it."""
