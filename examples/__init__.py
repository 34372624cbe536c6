"""Examples: the weather agent (`examples/weather.py`) and an offline demo model."""
