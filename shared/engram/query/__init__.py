"""The bounded NeedsMoreInfo loop: world queries, their context, capabilities and steps."""
