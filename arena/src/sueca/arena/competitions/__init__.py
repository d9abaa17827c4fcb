"""Competitions at work: their ladders, divisions, finals and exports, built on their records
(:mod:`sueca.arena.store.competitions`) and their pure rules (:mod:`sueca.arena.lifecycle`).
"""
