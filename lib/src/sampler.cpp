// Placeholder: the implementation lands shortly.
