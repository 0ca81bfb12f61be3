"""Use cases: what a user does, written once for the command line and the app (build a corpus, summarize, search
and compare one question, evaluate, review, remove). They compose the stages; the CLI and the pages call only these
and the ground floor.
"""
