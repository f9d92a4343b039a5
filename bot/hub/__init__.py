"""Model lookups on the Hugging Face Hub (and its mirrors, and ModelScope): I/O that core never does.

`reference` reads a Hub id or URL out of what the user typed, `lookup` fetches the model's config.json and
parameter counts and turns them into a core model description (core.model_config), `cache` keeps what was
looked up (with source and date) so a model asked about once is known when the Hub is unreachable.
"""
