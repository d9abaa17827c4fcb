"""Engine tests: fixtures live in the test modules; helpers in :mod:`kits.deals`."""
