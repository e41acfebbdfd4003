"""Cassettes: agentfuzz's turns in a vcrpy cassette and back, campaign tapes, offline replay."""
