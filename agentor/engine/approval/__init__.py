"""Human approval: which calls wait, what waits, what a person decided."""
