"""The puppet model: agentfuzz decides what the model writes, and knows what a server must
give back.

``formats`` is the catalog of the tool-call formats model families write, each with the ground
truth a faithful parser recovers. It is pure data and text: it imports nothing of the package but
the errors, so the server-side pieces may use it too.
"""
