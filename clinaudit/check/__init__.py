"""What each citation is cited for: metadata, topic, credibility, known failures."""
