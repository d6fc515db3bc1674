"""Tools that reach the web: fetch_url and web search, and the policy that
keeps them on the public web.
"""
