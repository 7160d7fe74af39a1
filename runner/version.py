"""The runner's version: in --version, the registration, runner_info and the package."""
VERSION = '1.1.0'
