"""The dataset format, version 1: frozen dataclasses, file loading, safe YAML, keyword inputs."""
