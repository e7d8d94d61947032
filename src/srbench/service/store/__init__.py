"""The store host's files and upkeep: verify and gc, the target registry file, the service's environment
file, setup checks and agent task resources."""
