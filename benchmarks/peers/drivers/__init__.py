"""Driver scripts run by each peer's own interpreter: stdlib plus that peer's packages only."""
