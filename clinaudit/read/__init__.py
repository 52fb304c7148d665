"""Read a report: input sources, Markdown, sentences, citations, claims."""
