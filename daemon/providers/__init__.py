"""Model providers: profiles, the streaming and local clients, their pool, and retries."""
