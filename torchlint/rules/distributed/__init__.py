"""Rules of this family (distributed training and training frameworks); one rule per module."""
