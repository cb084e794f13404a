"""Any document as a pi session (placeholder, filled below)."""
