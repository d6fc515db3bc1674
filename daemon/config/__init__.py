"""Every configuration record and its errors: the file layers, the
settings, provider profiles and their sampling keys.
"""
