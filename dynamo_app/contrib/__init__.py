"""Optional integrations with other packages, each behind an extra of its own."""
