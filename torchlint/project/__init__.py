"""Whole-project analysis: which project file an import names, what each file exports, and the
collected facts of the files a loop calls into (cached by content hash)."""
