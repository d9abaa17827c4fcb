"""The web front end of the league (read-only): pages and a JSON API over the store layer."""
