"""Small general utilities any package may import: files written atomically, statistics, tables, answer text."""
