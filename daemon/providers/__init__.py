"""Model providers: the OpenAI-compatible streaming client and the local non-streaming one."""
