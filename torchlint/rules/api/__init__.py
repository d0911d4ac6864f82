"""Rules of this family; one rule per module."""
