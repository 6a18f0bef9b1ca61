"""Two programs compared: ``align`` pairs their instructions, ``diff`` lists what
differs, ``explain`` ranks it into findings with verdicts, ``hashes`` says which
cache keys a change moves, ``constants`` finds where constants came from, and
``compare`` runs it all for two dumps."""
