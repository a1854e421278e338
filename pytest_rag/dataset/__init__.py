"""The dataset format, version 1: frozen records, file loading, safe YAML, keyword inputs."""
