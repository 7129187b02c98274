"""toys: federated problems, constants, participation, algorithms."""
