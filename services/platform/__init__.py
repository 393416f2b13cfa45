"""Live play without Flask or Celery: tables, seats, tickets, matchmaking, ratings, players.

The gateway's HTTP handlers and the Celery table worker both call these services, so a
bot's move and a human's take the same path to the same compare-and-set commit. Nothing
here imports Flask, Celery or the gateway (tests/test_layers.py walks the imports).
"""
