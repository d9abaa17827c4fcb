"""Engine tests: fixtures live in the test modules; helpers in :mod:`engine_helpers`."""
