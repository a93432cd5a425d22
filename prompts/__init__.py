"""Context Harness, prompt side: modes, templates and request assembly."""
