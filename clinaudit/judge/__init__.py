"""The optional model judge: a batched second opinion on whether sources support claims."""
