"""The fan-out benchmark: a load generator, a bare relay to compare with, and a server wrapper."""
