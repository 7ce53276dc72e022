"""Plans in and out: other tools' task files read into a plan (importing, import_formats) and
every plan copied from one store to another (copying)."""
