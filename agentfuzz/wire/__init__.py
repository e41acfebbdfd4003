"""The wire: how a ``Case`` goes out as an exact request and comes back as an ``Observation``.

``dialects/`` turns a case into a request body and an exchange into an observation (chat
completions, Responses); ``transport/`` sends it (httpx live, a vcrpy cassette, the proxy's relay);
``target.py`` puts the two together, ``Case -> Observation`` and nothing else.
"""
