"""`agentor-tui serve`: the app in a browser, through textual-serve (each tab its own app
process), behind a token away from loopback. `options` is the command line (argparse only),
`serving` prepares and runs the server, `site` is the aiohttp application, `guard` decides who
may reach it."""
